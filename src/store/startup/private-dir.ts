/**
 * Private directories: a directory that only this user can enter (owned by this user, mode
 * 0700, not a symbolic link). The socket's parent and the runtime directory must be one,
 * so no other user can reach the store's socket or race its lock file.
 */

import { lstat, stat } from "node:fs/promises";

export type DirState =
  | { kind: "absent" }
  | { kind: "private" }
  | { kind: "refused"; reason: string };

function uid(): number {
  return process.getuid?.() ?? -1;
}

/** Judges `path` as a private directory; `follow` follows a symbolic link at `path`. */
export async function inspectPrivateDir(path: string, follow = false): Promise<DirState> {
  let info: Awaited<ReturnType<typeof lstat>>;
  try {
    info = follow ? await stat(path) : await lstat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "absent" };
    return { kind: "refused", reason: `${path} cannot be inspected (${code})` };
  }
  if (info.isSymbolicLink()) return { kind: "refused", reason: `${path} is a symbolic link` };
  if (!info.isDirectory()) return { kind: "refused", reason: `${path} is not a directory` };
  if (info.uid !== uid()) {
    return { kind: "refused", reason: `${path} is not owned by this user (uid ${uid()})` };
  }
  const mode = info.mode & 0o777;
  if (mode !== 0o700) {
    return {
      kind: "refused",
      reason: `${path} has mode ${mode.toString(8).padStart(4, "0")}, needs 0700`,
    };
  }
  return { kind: "private" };
}
