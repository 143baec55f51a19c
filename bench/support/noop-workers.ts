/**
 * Benchmarks' worker fleet: real `skein worker module` processes serving one `noop` action
 * on queue `q`, connected to an in-process worker endpoint. Writes the worker document and a
 * token file into `dir`, spawns `count` workers and waits until `sessions()` (the matcher's
 * connected-session count) reaches it.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../../bin/skein.ts", import.meta.url));
const activities = fileURLToPath(
  new URL("../../test/fixtures/workers/activities.ts", import.meta.url),
);

export interface NoopWorkerOptions {
  readonly dir: string;
  readonly port: number;
  readonly count: number;
  readonly concurrency: number;
  readonly sessions: () => number;
}

export async function spawnNoopWorkers(options: NoopWorkerOptions): Promise<ChildProcess[]> {
  const doc = join(options.dir, "worker.json");
  const token = join(options.dir, "token");
  const actions = { noop: { module: activities, export: "noop" } };
  await writeFile(doc, JSON.stringify({ name: "bench", task_queue: "q", actions }));
  await writeFile(token, "bench\n", { mode: 0o600 });
  const args = [
    bin,
    "worker",
    "module",
    doc,
    "--endpoint",
    `127.0.0.1:${options.port}`,
    "--concurrency",
    String(options.concurrency),
    "--token-file",
    token,
  ];
  const env = { ...process.env, SKEIN_LOG_LEVEL: "warn" };
  const workers = Array.from({ length: options.count }, () =>
    spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"], env }),
  );
  while (options.sessions() < options.count) await new Promise((r) => setTimeout(r, 20));
  return workers;
}
