/**
 * The embedding tests' fixture: one generated test model per file (test-model.ts), and real
 * `skein-store serve --create` processes with the embedding group and the shipped worker,
 * reached through their socket with StoreClient. Logs (JSON lines on stderr) are kept so
 * tests can read start-up failures and restart delays from them.
 */

import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { StoreClient } from "../../../src/store/client/client.ts";
import type { EmbedSettings } from "../../../src/store/config/types.ts";
import { type Running, start, waitFor } from "../cli/harness.ts";
import { type TestModel, type TestModelOptions, writeTestModel } from "./test-model.ts";

export const EMBED_WORKER = fileURLToPath(
  new URL("../../../bin/skein-embed-worker", import.meta.url),
);

const roots: string[] = [];
after(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

export async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "skein-embed-"));
  roots.push(root);
  return root;
}

export async function testModel(options: TestModelOptions = {}): Promise<TestModel> {
  return writeTestModel(join(await tempRoot(), "model"), options);
}

/**
 * Decided embedding settings (the config's output) that fit the test model, for tests that
 * start an EmbedService in-process rather than through `skein-store serve`.
 */
export function embedSettings(model: TestModel): EmbedSettings {
  return {
    embed_worker: EMBED_WORKER,
    embed_model_dir: model.dir,
    embed_model_sha256: model.identity,
    embed_memory_bytes: 1n << 30n,
    embed_threads: 1n,
    embed_batch_items: 8n,
    embed_input_bytes: 4096n,
    embed_tokens: 32n,
    embed_frame_bytes: 1 << 20,
    embed_ready_ms: 60_000n,
    embed_call_ms: 60_000n,
    embed_waiting: 4n,
    embed_request_items: 64n,
    embed_page_records: 16,
    embed_writer_wait_ms: 1000n,
    embed_windows: false,
    embed_max_windows: null,
    embed_window_overlap_tokens: null,
    embed_restart_ms: 1000n,
    embed_restart_most_ms: 300_000n,
    embed_question_worker: false,
  };
}

const CORE = {
  branch_cache_bytes_per_shard: 1048576,
  max_frame: 4194304,
  max_clients: 16,
  max_page: 100,
  timeout_ms: 30000,
  create: { shards: 2, cache_bytes_total: 8388608, executor_threads: 1 },
};

/** A group that fits the test model (max 128 tokens, 16 dims). */
export function embedGroup(model: TestModel): Record<string, unknown> {
  return {
    embed_worker: EMBED_WORKER,
    embed_model_dir: model.dir,
    embed_model_sha256: model.identity,
    embed_memory_bytes: 1073741824,
    embed_threads: 1,
    embed_batch_items: 8,
    embed_input_bytes: 4096,
    embed_tokens: 32,
    embed_frame_bytes: 1048576,
    embed_ready_ms: 60000,
    embed_call_ms: 60000,
    embed_waiting: 4,
    embed_request_items: 64,
    embed_page_records: 16,
  };
}

export interface Served {
  readonly running: Running;
  readonly socket: string;
  readonly dataDir: string;
  client(): Promise<StoreClient>;
  /** Log lines (parsed) so far. */
  logs(): Record<string, unknown>[];
  stop(): Promise<void>;
}

/** Serves a new store with `group` and waits until it accepts a connection. */
export async function serve(
  group: Record<string, unknown>,
  dataDir?: string,
  env: Record<string, string> = {},
): Promise<Served> {
  const dir = await tempRoot();
  const run = join(dir, "run");
  await mkdir(run, { recursive: true });
  await chmod(run, 0o700);
  const data = dataDir ?? join(dir, "data", "store");
  await mkdir(join(data, ".."), { recursive: true });
  const file = join(dir, "service.json");
  await writeFile(file, JSON.stringify({ ...CORE, data_dir: data, ...group }));
  const create = dataDir === undefined ? ["--create"] : [];
  const running = start(["serve", file, ...create], {
    XDG_RUNTIME_DIR: run,
    SKEIN_LOG_LEVEL: "info",
    ...env,
  });
  const socket = join(run, "skein-store", "store.sock");
  const logs = () =>
    running
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  await waitFor(running, () => logs().some((l) => l.msg === "store listening"), "listening");
  const clients: StoreClient[] = [];
  return {
    running,
    socket,
    dataDir: data,
    logs,
    async client() {
      const client = await StoreClient.connect(socket, { timeoutMs: 120_000 });
      clients.push(client);
      return client;
    },
    async stop() {
      for (const c of clients) await c.close().catch(() => {});
      running.child.kill("SIGTERM");
      await running.exited;
    },
  };
}

/**
 * An executable worker written from the protocol docs (stalling-worker.ts) that answers
 * `start` for `model`, then never a batch.
 */
export async function stallingWorker(model: TestModel): Promise<string> {
  const stall = join(await tempRoot(), "stalling-worker");
  const script = fileURLToPath(new URL("./stalling-worker.ts", import.meta.url));
  await writeFile(stall, `#!/bin/sh\nexec "$SKEIN_EMBED_NODE" "${script}" "${model.identity}"\n`);
  await chmod(stall, 0o755);
  return stall;
}

/** Waits until the walk has brought every branch of `collection` to its head. */
export async function walked(client: StoreClient, collection: string): Promise<void> {
  for (let i = 0; i < 2400; i++) {
    const status = (await client.call("embed.status", { collection })) as { pending: number };
    if (status.pending === 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the walk of ${collection} did not finish`);
}

/** The refusal code a call rejects with. */
export async function refusalOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { code: string }).code;
  }
  throw new Error("the call was not refused");
}
