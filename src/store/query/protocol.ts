/**
 * The query worker protocol (docs/queries.md, "Worker protocol"): the messages the store
 * and a query worker exchange over the worker's stdin and stdout, as tagged unions on
 * `type`, each decoded once at the pipe with the common decoder. Every message but
 * `ready` carries the `id` of the store message it answers. Records and rows travel as
 * JSON arrays inside the message; a batch has one exact layout (frames.ts) so a worker can
 * hand its records' bytes to a sandbox without parsing the message.
 *
 *   store → worker: compile, batch, end
 *   worker → store: ready (once, unasked), compiled, outputs, error, ended
 */

// The decode modules one by one, not the index: the worker runs under Node's permission
// model and may read only these files, not the JSON-source decoders' dependencies.
import { array } from "../../common/decode/collections.ts";
import type { Decoded, Decoder } from "../../common/decode/decoder.ts";
import { integer, u32 } from "../../common/decode/numbers.ts";
import { tagged } from "../../common/decode/objects.ts";
import { refuse } from "../../common/decode/refusal.ts";
import { string } from "../../common/decode/strings.ts";

/** The protocol version a worker names in `ready`; the store refuses any other. */
export const QUERY_PROTOCOL = 1;

const id = u32();
const bytes = integer("u64", { min: 1, max: Number.MAX_SAFE_INTEGER });

/** Any value JSON.parse made (it is JSON by construction, so nothing is checked). */
const parsed: Decoder<unknown> = { expected: "JSON value", run: (value) => value };

/** A row: `[index, output]`, index into the batch. Order is checked by the store. */
const row: Decoder<readonly [number, unknown]> = {
  expected: "[index, output]",
  run(value, path) {
    if (!Array.isArray(value) || value.length !== 2 || !Number.isSafeInteger(value[0])) {
      refuse("shape", path, "must be [index, output] with an integer index");
    }
    return value as [number, unknown];
  },
};

export const workerInput = tagged("type", {
  /** Starts a query: a fresh sandbox running `code` with `args`, under these limits. */
  compile: {
    id,
    code: string(),
    args_json: string(),
    time_ms: bytes,
    memory_bytes: bytes,
    outputs_per_record: bytes,
  },
  /** Runs the query's function over each record, `{key, value}`. */
  batch: { id, records: array(parsed) },
  /** Ends the query: the sandbox is discarded. Answered by `ended`. */
  end: { id },
});

export const workerOutput = tagged("type", {
  ready: { protocol: u32(), worker: string({ maxBytes: 256 }) },
  compiled: { id },
  /** `[index, output]` rows, index into the batch, in record order. */
  outputs: { id, rows: array(row) },
  error: { id, code: string({ maxBytes: 64 }), message: string({ maxBytes: 4096 }) },
  ended: { id },
});

export type WorkerInput = Decoded<typeof workerInput>;
export type WorkerOutput = Decoded<typeof workerOutput>;

/**
 * Codes a worker may put in an `error` message. The limit codes are the spec's runtime
 * refusals and reach the caller as they are; `query_code_error` is the query's own
 * failure (it does not compile, is not a function, or throws); anything else is taken as
 * the worker failing (`query_worker_failed`).
 */
export const WORKER_ERROR_CODES = [
  "query_time_limit",
  "query_memory_limit",
  "query_output_limit",
  "query_code_error",
] as const;
