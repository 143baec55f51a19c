/**
 * One `query.run` page on a worker that is already started: compile the code, feed the
 * version's records in batches (QUERY_BATCHES_IN_FLIGHT ahead of the answers), gather
 * rows in key order, and stop by the paging rule of docs/store-protocol.md:
 *
 * - a page ends after the first record whose outputs bring it to `limit` rows or more
 *   (a record's outputs are never split, so a page holds at most
 *   limit + query_outputs_per_record − 1 rows); `next` is that record's key, or null when
 *   no record of the range follows it;
 * - a page also ends when the range ends (`next` null);
 * - a call examines at most query_scan_records records: if they are all examined and the
 *   page is neither full nor at the range's end, the call is refused with
 *   `query_scan_limit`. `scanned` counts the records examined for the page.
 *
 * The caller owns the worker's lifetime (the kill timer, ending the query, reuse).
 */

import type { SkeinError } from "../../common/errors.ts";
import type { RecordScan, RecordText } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import { encodeBatchFrame } from "./frames.ts";
import { QUERY_BATCH_RECORDS, QUERY_BATCHES_IN_FLIGHT, QUERY_OUTPUT_DEPTH } from "./limits.ts";
import { nestsDeeperThan } from "./output-depth.ts";
import { WORKER_ERROR_CODES, type WorkerOutput } from "./protocol.ts";
import type { QueryWorkerProcess } from "./worker-process.ts";

export interface QueryLimits {
  readonly timeMs: number;
  readonly memoryBytes: number;
  readonly outputsPerRecord: number;
  readonly scanRecords: number;
}

export interface QueryRow {
  readonly key: string;
  readonly output: unknown;
}

export interface QueryPage {
  readonly rows: QueryRow[];
  readonly next: string | null;
  readonly scanned: number;
  readonly version: number;
}

interface Batch {
  readonly keys: string[];
  readonly answer: Promise<WorkerOutput>;
}

export async function runQuery(
  worker: QueryWorkerProcess,
  scan: RecordScan,
  query: { readonly code: string; readonly argsJson: string; readonly limit: number },
  limits: QueryLimits,
): Promise<QueryPage> {
  // The first batches go out behind the compile, not after its answer: the worker answers
  // in order, and after a failed compile it answers them with the same error.
  let compiled: Promise<WorkerOutput> | undefined = worker.send({
    type: "compile",
    id: worker.id(),
    code: query.code,
    args_json: query.argsJson,
    time_ms: limits.timeMs,
    memory_bytes: limits.memoryBytes,
    outputs_per_record: limits.outputsPerRecord,
  });
  compiled.catch(() => {});
  const rows: QueryRow[] = [];
  const inFlight: Batch[] = [];
  let sent = 0;
  let scanned = 0;
  for (;;) {
    while (inFlight.length < QUERY_BATCHES_IN_FLIGHT && sent < limits.scanRecords) {
      const room = expectedRecords(query.limit - rows.length, rows.length, scanned);
      const count = Math.min(
        QUERY_BATCH_RECORDS,
        room - (sent - scanned),
        limits.scanRecords - sent,
      );
      if (count <= 0) break;
      const records = scan.take(count);
      if (records.length === 0) break;
      sent += records.length;
      inFlight.push(sendBatch(worker, records));
    }
    if (compiled !== undefined) {
      expect(await compiled, "compiled", worker);
      compiled = undefined;
    }
    const batch = inFlight.shift();
    if (batch === undefined) break;
    const answer = expect(await batch.answer, "outputs", worker);
    const stop = collect(answer.rows, batch.keys, rows, query.limit, limits, worker);
    if (stop >= 0) {
      const more = stop < batch.keys.length - 1 || inFlight.length > 0 || !scan.exhausted;
      return {
        rows,
        next: more ? batch.keys[stop]! : null,
        scanned: scanned + stop + 1,
        version: scan.version,
      };
    }
    scanned += batch.keys.length;
  }
  if (!scan.exhausted) {
    throw storeError(
      "query_scan_limit",
      `the page needed more than query_scan_records (${limits.scanRecords}) records examined; ` +
        "narrow it with prefix, or ask for fewer rows",
    );
  }
  return { rows, next: null, scanned, version: scan.version };
}

/**
 * How many records the page is expected to still need: the rows it lacks at the yield
 * seen so far (one row per record before any answer), at most the in-flight window. The
 * store never has more records in flight than this, so a projection's page is not fed a
 * batch beyond its end, while a selective filter (yield near 0) keeps the window full.
 */
function expectedRecords(missingRows: number, rows: number, examined: number): number {
  const window = QUERY_BATCHES_IN_FLIGHT * QUERY_BATCH_RECORDS;
  if (examined > 0 && rows === 0) return window;
  const rowsPerRecord = examined === 0 ? 1 : rows / examined;
  return Math.min(window, Math.ceil(missingRows / rowsPerRecord));
}

function sendBatch(worker: QueryWorkerProcess, records: RecordText[]): Batch {
  const keys: string[] = new Array(records.length);
  for (let i = 0; i < records.length; i++) keys[i] = records[i]![0];
  // The stored values are JSON text already: the frame is written around them.
  const answer = worker.post(encodeBatchFrame(worker.id(), records));
  // A page may end before this answer is read; its failure is then nobody's concern.
  answer.catch(() => {});
  return { keys, answer };
}

/**
 * Appends a batch's rows to the page. Returns the index of the record that filled the
 * page (the page ends there), or -1 when the whole batch fitted.
 */
function collect(
  rows: readonly (readonly [number, unknown])[],
  keys: string[],
  page: QueryRow[],
  limit: number,
  limits: QueryLimits,
  worker: QueryWorkerProcess,
): number {
  let current = -1;
  let count = 0;
  for (let r = 0; r < rows.length; r++) {
    const [index, output] = rows[r]!;
    if (index < current || index < 0 || index >= keys.length) {
      throw worker.kill("sent a row outside its batch or out of order");
    }
    if (index !== current) {
      if (page.length >= limit) return current;
      current = index;
      count = 0;
    }
    if (++count > limits.outputsPerRecord) {
      throw storeError(
        "query_output_limit",
        `record ${JSON.stringify(keys[index])} gave more than query_outputs_per_record (${limits.outputsPerRecord}) outputs`,
      );
    }
    if (nestsDeeperThan(output, QUERY_OUTPUT_DEPTH)) {
      throw storeError(
        "query_output_limit",
        `record ${JSON.stringify(keys[index])} gave an output nested deeper than ${QUERY_OUTPUT_DEPTH} levels`,
      );
    }
    page.push({ key: keys[index]!, output });
  }
  return page.length >= limit && current >= 0 ? current : -1;
}

/** The answer if it is of the expected type; a worker's refusal or a protocol breach throws. */
function expect<T extends WorkerOutput["type"]>(
  answer: WorkerOutput,
  type: T,
  worker: QueryWorkerProcess,
): Extract<WorkerOutput, { type: T }> {
  if (answer.type === type) return answer as Extract<WorkerOutput, { type: T }>;
  if (answer.type === "error") throw workerRefusal(answer, worker);
  throw worker.kill(`answered ${answer.type} where ${type} was due`);
}

function workerRefusal(
  answer: Extract<WorkerOutput, { type: "error" }>,
  worker: QueryWorkerProcess,
): SkeinError {
  const code = WORKER_ERROR_CODES.find((c) => c === answer.code);
  if (code === undefined) return worker.kill(`failed: ${answer.code}: ${answer.message}`);
  return storeError(code, answer.message);
}
