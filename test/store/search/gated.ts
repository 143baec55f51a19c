/**
 * The gated worker (gated-worker.ts) as the tests start it, the settings they serve it with,
 * and what it logged: the texts of each `embed` message it received or took.
 */

import { readFileSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempRoot } from "./fixture.ts";

const IDENTITY = "d".repeat(64);

export async function gatedWorker(): Promise<{ worker: string; dir: string }> {
  const dir = await tempRoot();
  const worker = join(dir, "gated-worker");
  const script = fileURLToPath(new URL("./gated-worker.ts", import.meta.url));
  await writeFile(worker, `#!/bin/sh\nexec "$SKEIN_EMBED_NODE" "${script}" "${IDENTITY}"\n`);
  await chmod(worker, 0o755);
  return { worker, dir };
}

/** The embedding group of the tests' stores, with the gated worker. */
export function embedSettings(worker: string, dir: string, overrides: Record<string, number>) {
  return {
    embed_worker: worker,
    embed_model_dir: dir,
    embed_model_sha256: IDENTITY,
    embed_memory_bytes: 2 ** 30,
    embed_threads: 1,
    embed_batch_items: 32,
    embed_input_bytes: 4096,
    embed_tokens: 128,
    embed_frame_bytes: 1 << 20,
    embed_ready_ms: 120_000,
    embed_call_ms: 120_000,
    embed_request_items: 64,
    embed_waiting: 4,
    embed_page_records: 16,
    ...overrides,
  };
}

/** The texts of each message of `kind` the worker took (or, `received`, was sent). */
export function requests(dir: string, kind: string, file = "requests.jsonl"): number[] {
  let text = "";
  try {
    text = readFileSync(join(dir, file), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { kind: string; texts: number })
    .filter((r) => r.kind === kind)
    .map((r) => r.texts);
}
