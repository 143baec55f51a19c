/**
 * The start-up probe of `query_worker` (spec: "A startup probe exercises the worker. A
 * failed probe leaves other store verbs available and retains the named failure for
 * queries"). It checks the file (missing, not a regular file, not executable: each its own
 * code), then starts the worker and runs one small query through the whole protocol,
 * comparing the rows with the expected ones. It never throws: the outcome is a started
 * worker (kept by the pool) or the named failure.
 */

import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import type { SkeinError } from "../../common/errors.ts";
import { storeError } from "../errors.ts";
import { encodeBatchFrame } from "./frames.ts";
import { QUERY_WORKER_START_MS } from "./limits.ts";
import type { WorkerOutput } from "./protocol.ts";
import { QueryWorkerProcess } from "./worker-process.ts";

/** The probe query: it reads the record and the args, and gives two outputs for one. */
const PROBE_CODE =
  "(record, args) => record.value.n > args.min ? [record.key, record.value.n * 2] : undefined";
const PROBE_ARGS = { min: 1 };
const PROBE_RECORDS: [key: string, json: string][] = [
  ["a", '{"n":1}'],
  ["b", '{"n":2}'],
];
const PROBE_ROWS = JSON.stringify([
  [1, "b"],
  [1, 4],
]);
/** Limits of the probe query: ample for it, small enough to be a cheap sandbox. */
const PROBE_LIMITS = {
  time_ms: QUERY_WORKER_START_MS,
  memory_bytes: 16 << 20,
  outputs_per_record: 2,
};

export type ProbeOutcome =
  | { readonly ok: true; readonly worker: QueryWorkerProcess }
  | { readonly ok: false; readonly failure: SkeinError };

export async function probeQueryWorker(path: string, frameLimit: number): Promise<ProbeOutcome> {
  const refused = await checkFile(path);
  if (refused !== undefined) return { ok: false, failure: refused };
  let worker: QueryWorkerProcess | undefined;
  const timer = setTimeout(
    () => worker?.kill(`did not finish the probe within ${QUERY_WORKER_START_MS} ms`),
    QUERY_WORKER_START_MS,
  );
  try {
    worker = await QueryWorkerProcess.start(path, frameLimit);
    await exchange(worker);
    return { ok: true, worker };
  } catch (error) {
    worker?.kill("failed its probe");
    const reason = (error as Error).message;
    return {
      ok: false,
      failure: storeError("query_worker_probe_failed", `query_worker ${path}: ${reason}`),
    };
  } finally {
    clearTimeout(timer);
  }
}

async function checkFile(path: string): Promise<SkeinError | undefined> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    return storeError("query_worker_missing", `query_worker ${path}: no such file`);
  }
  if (!info.isFile()) {
    return storeError("query_worker_not_file", `query_worker ${path}: not a regular file`);
  }
  try {
    await access(path, constants.X_OK);
  } catch {
    return storeError("query_worker_not_executable", `query_worker ${path}: not executable`);
  }
  return undefined;
}

async function exchange(worker: QueryWorkerProcess): Promise<void> {
  want(
    await worker.send({
      type: "compile",
      id: worker.id(),
      code: PROBE_CODE,
      args_json: JSON.stringify(PROBE_ARGS),
      ...PROBE_LIMITS,
    }),
    "compiled",
  );
  const outputs = want(await worker.post(encodeBatchFrame(worker.id(), PROBE_RECORDS)), "outputs");
  const rows = JSON.stringify(outputs.rows);
  if (rows !== PROBE_ROWS) {
    throw new Error(`the probe query gave ${rows.slice(0, 200)}, not ${PROBE_ROWS}`);
  }
  want(await worker.send({ type: "end", id: worker.id() }), "ended");
}

function want<T extends WorkerOutput["type"]>(
  answer: WorkerOutput,
  type: T,
): Extract<WorkerOutput, { type: T }> {
  if (answer.type === type) return answer as Extract<WorkerOutput, { type: T }>;
  const detail = answer.type === "error" ? ` (${answer.code}: ${answer.message})` : "";
  throw new Error(`answered ${answer.type}${detail} where ${type} was due`);
}
