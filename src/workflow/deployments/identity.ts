/**
 * The identity of this server's own binary, captured into every deployment record it
 * stores: the Node executable, the `skein` entry script a deployment's verb is appended to,
 * the package version and the sha256 of the entry file. It is computed once per process
 * (the entry does not change under a running server) and says which build launched a worker.
 */

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { VERSION } from "../../common/version.ts";
import type { BinaryIdentity } from "./record.ts";

/** The `skein` entry of this checkout; deployments run `node ENTRY ...verb`. */
export const SKEIN_ENTRY = fileURLToPath(new URL("../../../bin/skein.ts", import.meta.url));

let cached: BinaryIdentity | undefined;

export function binaryIdentity(): BinaryIdentity {
  cached ??= {
    path: process.execPath,
    entry: SKEIN_ENTRY,
    version: VERSION,
    entry_sha256: createHash("sha256").update(readFileSync(SKEIN_ENTRY)).digest("hex"),
  };
  return cached;
}

/** The value of SKEIN_DEPLOYMENT for a launch: the name and the launch revision. */
export function deploymentIdentity(name: string, revision: number): string {
  return `${name}@${revision}`;
}
