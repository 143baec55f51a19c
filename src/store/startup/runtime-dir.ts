/**
 * The private OS runtime directory where a store's default socket and its name lock live:
 * `$XDG_RUNTIME_DIR/skein-store` when that variable is set (the directory it names must
 * itself be absolute, owned by this user and mode 0700, as the XDG spec promises), else a
 * per-user directory `skein-store-<uid>` under the system temporary directory. Either way
 * the `skein-store` directory is created with mode 0700 on first use and must be private
 * when it already exists; anything else is `invalid_runtime_location`.
 */

import { chmod, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { INVALID_RUNTIME_LOCATION, startupRefusal } from "../errors.ts";
import { inspectPrivateDir } from "./private-dir.ts";

export interface RuntimeDir {
  readonly path: string;
  /** False when the directory does not exist yet and will be created at commit. */
  readonly exists: boolean;
}

const FIELD = "socket";

/** Finds and judges the runtime directory without creating anything. */
export async function resolveRuntimeDir(
  env: Readonly<Record<string, string | undefined>>,
): Promise<RuntimeDir> {
  const xdg = env.XDG_RUNTIME_DIR;
  let path: string;
  if (xdg !== undefined && xdg !== "") {
    if (!isAbsolute(xdg)) {
      throw startupRefusal(
        INVALID_RUNTIME_LOCATION,
        FIELD,
        `XDG_RUNTIME_DIR must be an absolute path, found ${JSON.stringify(xdg)}`,
      );
    }
    const base = await inspectPrivateDir(xdg, true);
    if (base.kind !== "private") {
      const reason = base.kind === "absent" ? `${xdg} does not exist` : base.reason;
      throw startupRefusal(INVALID_RUNTIME_LOCATION, FIELD, `XDG_RUNTIME_DIR: ${reason}`);
    }
    path = join(xdg, "skein-store");
  } else {
    path = join(tmpdir(), `skein-store-${process.getuid?.() ?? "user"}`);
  }
  const own = await inspectPrivateDir(path);
  if (own.kind === "refused") {
    throw startupRefusal(INVALID_RUNTIME_LOCATION, FIELD, `runtime directory ${own.reason}`);
  }
  return { path, exists: own.kind === "private" };
}

/** Creates the runtime directory (mode 0700) when it does not exist yet. */
export async function ensureRuntimeDir(dir: RuntimeDir): Promise<void> {
  if (dir.exists) return;
  try {
    await mkdir(dir.path, { mode: 0o700 });
    // The umask may have narrowed the mode; the directory must be exactly 0700.
    await chmod(dir.path, 0o700);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const state = await inspectPrivateDir(dir.path);
  if (state.kind !== "private") {
    const reason = state.kind === "absent" ? "vanished" : state.reason;
    throw startupRefusal(INVALID_RUNTIME_LOCATION, FIELD, `runtime directory ${reason}`);
  }
}
