/**
 * The shipped query worker's process loop (bin/skein-query-worker): announce `ready`,
 * then answer the store's messages from stdin on stdout, strictly in order, one query at
 * a time. A query's sandbox (sandbox.ts) lives from `compile` to `end`; after a failed
 * compile or batch the query is over for the worker, and later batches of it are answered
 * with the same error until `end`. A batch in the store's exact layout goes to the sandbox
 * as bytes, unparsed; when the query's code is a plain expression (expression.ts) a batch
 * is evaluated by the fast path instead, which hands back to the sandbox any batch it
 * cannot evaluate exactly. Between queries the next query's runtime is made ahead. A malformed
 * message or a frame above the bound ends the process: the store sees the exit and starts
 * another.
 */

import { decodeOrThrow } from "../../common/decode/decoder.ts";
import { DecodeError } from "../../common/decode/refusal.ts";
import { VERSION } from "../../common/version.ts";
import { compileExpression, type Expression } from "./expression.ts";
import { runFastBatch } from "./fast-batch.ts";
import { encodeJsonFrame, encodeSplicedFrame, JsonFrameReader, sliceBatch } from "./frames.ts";
import { WORKER_INPUT_FRAME_BYTES } from "./limits.ts";
import { QUERY_PROTOCOL, type WorkerInput, type WorkerOutput, workerInput } from "./protocol.ts";
import { Sandbox } from "./sandbox.ts";
import { SandboxError } from "./sandbox-errors.ts";
import { prepareSandbox } from "./sandbox-memory.ts";

let sandbox: Sandbox | undefined;
/**
 * The query's fast path (fast-batch.ts), when its code is a plain expression. Its sandbox is
 * made only when a batch needs it (`sandbox` stays undefined until then), so a page the
 * fast path answers whole does not pay for a runtime.
 */
let fast:
  | {
      readonly expression: Expression;
      readonly args: { readonly value: unknown; readonly bytes: number };
      readonly compile: Extract<WorkerInput, { type: "compile" }>;
      readonly startedAt: number;
    }
  | undefined;
let failure: SandboxError | undefined;
/** The memory size of the last query, which the next one most likely asks again. */
let lastMemoryBytes: number | undefined;

function send(message: WorkerOutput): void {
  process.stdout.write(encodeJsonFrame(JSON.stringify(message)));
}

function fail(id: number, error: unknown): void {
  const e =
    error instanceof SandboxError ? error : new SandboxError("query_worker_failed", String(error));
  send({ type: "error", id, code: e.code, message: e.message });
}

/** A store message, with a batch's records as the bytes of their JSON array. */
type Message =
  | Exclude<WorkerInput, { type: "batch" }>
  | { readonly type: "batch"; readonly id: number; readonly records: Uint8Array };

async function handle(message: Message): Promise<void> {
  switch (message.type) {
    case "compile":
      return compile(message);
    case "batch":
      return batch(message.id, message.records);
    case "end":
      sandbox?.dispose();
      sandbox = undefined;
      fast = undefined;
      failure = undefined;
      send({ type: "ended", id: message.id });
      // While the store answers its client, the next query's runtime is made.
      if (lastMemoryBytes !== undefined) await prepareSandbox(lastMemoryBytes);
      return;
  }
}

async function compile(message: Extract<WorkerInput, { type: "compile" }>): Promise<void> {
  sandbox?.dispose();
  sandbox = undefined;
  fast = undefined;
  failure = undefined;
  lastMemoryBytes = message.memory_bytes;
  try {
    const startedAt = performance.now();
    // The grammar is a subset of JavaScript's expressions: what it parses compiles.
    const expression = compileExpression(message.code);
    if (expression !== undefined) {
      const args = { value: JSON.parse(message.args_json), bytes: message.args_json.length };
      fast = { expression, args, compile: message, startedAt };
    } else sandbox = await Sandbox.create(message.code, message.args_json, limitsOf(message));
    send({ type: "compiled", id: message.id });
  } catch (error) {
    failure = error as SandboxError;
    fail(message.id, error);
  }
}

function limitsOf(message: Extract<WorkerInput, { type: "compile" }>) {
  return {
    timeMs: message.time_ms,
    memoryBytes: message.memory_bytes,
    outputsPerRecord: message.outputs_per_record,
  };
}

async function batch(id: number, records: Uint8Array): Promise<void> {
  if (sandbox === undefined && fast === undefined) {
    fail(id, failure ?? new SandboxError("query_worker_failed", "no query compiled"));
    return;
  }
  try {
    let rows: Uint8Array | undefined;
    if (fast !== undefined) {
      // The same wall-time rule as the sandbox's interrupt: query_time_ms from compile.
      if (performance.now() > fast.startedAt + fast.compile.time_ms) {
        throw new SandboxError("query_time_limit", "the query ran past query_time_ms");
      }
      rows = runFastBatch(fast.expression, fast.args, records, limitsOf(fast.compile));
      if (rows === undefined && sandbox === undefined) {
        const { code, args_json } = fast.compile;
        sandbox = await Sandbox.create(code, args_json, limitsOf(fast.compile), fast.startedAt);
      }
    }
    rows ??= sandbox!.runBatch(records);
    process.stdout.write(encodeSplicedFrame(`{"type":"outputs","id":${id},"rows":`, rows, "}"));
  } catch (error) {
    failure = error as SandboxError;
    sandbox?.dispose();
    sandbox = undefined;
    fast = undefined;
    fail(id, error);
  }
}

/** The message of a frame; a batch in the exact layout is sliced, not parsed. */
function read(payload: Buffer): Message {
  const sliced = sliceBatch(payload);
  if (sliced !== undefined) return { type: "batch", ...sliced };
  const message = decodeOrThrow(workerInput, JSON.parse(payload.toString("utf8")));
  if (message.type !== "batch") return message;
  return { type: "batch", id: message.id, records: Buffer.from(JSON.stringify(message.records)) };
}

export function runQueryWorker(): void {
  const reader = new JsonFrameReader(WORKER_INPUT_FRAME_BYTES);
  let chain = Promise.resolve();
  process.stdin.on("data", (chunk: Buffer) => {
    for (const event of reader.push(chunk)) {
      if (event.kind === "too_large") {
        process.stderr.write(`skein-query-worker: a frame of ${event.length} bytes\n`);
        process.exit(2);
      }
      let message: Message;
      try {
        message = read(event.payload);
      } catch (error) {
        const reason = error instanceof DecodeError ? error.message : "not JSON";
        process.stderr.write(`skein-query-worker: malformed message: ${reason}\n`);
        process.exit(2);
      }
      chain = chain.then(() => handle(message));
    }
  });
  process.stdin.on("end", () => process.exit(0));
  send({ type: "ready", protocol: QUERY_PROTOCOL, worker: `skein-query-worker ${VERSION}` });
}
