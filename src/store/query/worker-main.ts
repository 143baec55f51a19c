/**
 * The shipped query worker's process loop (bin/skein-query-worker): announce `ready`,
 * then answer the store's messages from stdin on stdout, strictly in order, one query at
 * a time. A query's sandbox (sandbox.ts) lives from `compile` to `end`; after a failed
 * batch the query is over for the worker, and later batches of it are answered with the
 * same error until `end`. A malformed message or a frame above the bound ends the process:
 * the store sees the exit and starts another.
 */

import { decodeOrThrow } from "../../common/decode/decoder.ts";
import { DecodeError } from "../../common/decode/refusal.ts";
import { VERSION } from "../../common/version.ts";
import { encodeJsonFrame, JsonFrameReader } from "./frames.ts";
import { WORKER_INPUT_FRAME_BYTES } from "./limits.ts";
import { QUERY_PROTOCOL, type WorkerInput, type WorkerOutput, workerInput } from "./protocol.ts";
import { Sandbox, SandboxError } from "./sandbox.ts";

let sandbox: Sandbox | undefined;
let failure: SandboxError | undefined;

function send(message: WorkerOutput): void {
  process.stdout.write(encodeJsonFrame(JSON.stringify(message)));
}

/** An `outputs` frame built around the rows text, which is JSON already. */
function sendRows(id: number, rowsJson: string): void {
  process.stdout.write(
    encodeJsonFrame(`{"type":"outputs","id":${id},"rows_json":${JSON.stringify(rowsJson)}}`),
  );
}

function fail(id: number, error: unknown): void {
  const e =
    error instanceof SandboxError ? error : new SandboxError("query_worker_failed", String(error));
  send({ type: "error", id, code: e.code, message: e.message });
}

async function handle(message: WorkerInput): Promise<void> {
  switch (message.type) {
    case "compile": {
      sandbox?.dispose();
      sandbox = undefined;
      failure = undefined;
      try {
        sandbox = await Sandbox.create(message.code, message.args_json, {
          timeMs: message.time_ms,
          memoryBytes: message.memory_bytes,
          outputsPerRecord: message.outputs_per_record,
        });
        send({ type: "compiled", id: message.id });
      } catch (error) {
        failure = error as SandboxError;
        fail(message.id, error);
      }
      return;
    }
    case "batch": {
      if (sandbox === undefined) {
        fail(message.id, failure ?? new SandboxError("query_worker_failed", "no query compiled"));
        return;
      }
      try {
        sendRows(message.id, sandbox.runBatch(message.records_json));
      } catch (error) {
        failure = error as SandboxError;
        sandbox.dispose();
        sandbox = undefined;
        fail(message.id, error);
      }
      return;
    }
    case "end":
      sandbox?.dispose();
      sandbox = undefined;
      failure = undefined;
      send({ type: "ended", id: message.id });
      return;
  }
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
      let message: WorkerInput;
      try {
        message = decodeOrThrow(workerInput, JSON.parse(event.text));
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
