/**
 * Which file a deployment may hand its worker as a credential (`--token-file`). A deploy
 * grant lets its holder launch workers, not borrow the server's identity: the worker would
 * otherwise connect with the all-grants admin token and serve any namespace. The rule is
 * that nothing inside the server's data directory is a worker credential (it holds the
 * signing key, the admin token, the database and the workers' logs: all the server's own),
 * judged on the resolved path (symbolic links and `..` followed), and that no file anywhere
 * may be the signing key or the admin token under another name (a hard link: same inode).
 */

import { realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";
import { ADMIN_TOKEN_FILE } from "../auth/admin-token.ts";
import { SIGNING_KEY_FILE } from "../auth/keys.ts";

async function resolved(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

async function inode(path: string): Promise<string | undefined> {
  try {
    const s = await stat(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

/** Why `tokenFile` may not be a worker credential of the server at `dataDir`, or undefined. */
export async function tokenFileRefusal(
  tokenFile: string,
  dataDir: string,
): Promise<string | undefined> {
  const file = await resolved(tokenFile);
  const data = (await resolved(dataDir)) ?? dataDir;
  if (file !== undefined && (file === data || file.startsWith(`${data}${sep}`))) {
    return "is inside the server's data directory; worker credentials must live elsewhere";
  }
  const id = await inode(tokenFile);
  if (id === undefined) return undefined;
  for (const [own, what] of [
    [SIGNING_KEY_FILE, "the server's signing key"],
    [ADMIN_TOKEN_FILE, "the server's admin token"],
  ] as const) {
    if (id === (await inode(join(dataDir, own)))) return `is ${what} (a link to it)`;
  }
  return undefined;
}
