/**
 * The admin token file: on first start the server issues a token for subject `admin` with
 * every grant (all namespaces, deploy, worker) and writes it to `<data_dir>/admin.token`,
 * readable only by its owner (mode 0600) and written atomically, so the operator can call the
 * API and issue narrower tokens. An existing (non-empty) file is left as it is.
 */

import type { KeyObject } from "node:crypto";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/files.ts";
import { workflowError } from "../errors.ts";
import { sizeOf } from "./keys.ts";
import { issueToken } from "./tokens.ts";

export const ADMIN_TOKEN_FILE = "admin.token";
/** A year: long enough for an operator's bootstrap credential, short enough to expire. */
export const ADMIN_TOKEN_TTL_SECONDS = 365 * 24 * 3600;

export async function ensureAdminToken(
  dataDir: string,
  key: KeyObject,
): Promise<{ path: string; created: boolean }> {
  const path = join(dataDir, ADMIN_TOKEN_FILE);
  const size = await sizeOf(path);
  // An empty file is what a failed first start of an older build left; it is replaced.
  if (size !== undefined && size > 0) return { path, created: false };
  const token = await issueToken(key, {
    subject: "admin",
    namespaces: "*",
    deploy: true,
    worker: true,
    ttlSeconds: ADMIN_TOKEN_TTL_SECONDS,
  });
  try {
    await writeFileAtomic(path, `${token}\n`, { mode: 0o600, replace: size === 0 });
    return { path, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return { path, created: false };
    throw workflowError("storage_unavailable", `cannot write the admin token ${path}`, error);
  }
}
