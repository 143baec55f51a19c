/**
 * The embedding worker protocol (docs/embeddings.md, "Worker protocol"): the messages the
 * store and an embedding worker exchange over the worker's stdin and stdout, as tagged
 * unions on `type`, each decoded once at the pipe with the common decoder. Frames are a
 * 4-byte big-endian payload length, then the payload as UTF-8 JSON (frames.ts), so a
 * worker in any language can speak it with its standard library.
 *
 *   store → worker: start (once, first), embed
 *   worker → store: ready or failed (once, answering start), vectors, error
 *
 * Vectors travel as base64 of little-endian float32, one string per text holding its
 * windows one after another. Both the store and the shipped worker use this module; the
 * worker runs under Node's permission model, so decode modules are imported one by one.
 */

import { array } from "../../common/decode/collections.ts";
import type { Decoded } from "../../common/decode/decoder.ts";
import { nullable } from "../../common/decode/decoder.ts";
import { integer, u32 } from "../../common/decode/numbers.ts";
import { object, tagged } from "../../common/decode/objects.ts";
import { oneOf, string } from "../../common/decode/strings.ts";

/** The protocol version a worker names in `ready`; the store refuses any other. */
export const EMBED_PROTOCOL = 1;

/** Bytes of one vector component on the wire (float32). */
export const COMPONENT_BYTES = 4;
/** JSON around one item of a `vectors` answer besides its base64 (`{"windows":N,"data":""}`). */
const ITEM_OVERHEAD_BYTES = 48;
/** JSON around a `vectors` answer's items (`{"type":"vectors","id":N,"items":[]}`). */
const ANSWER_OVERHEAD_BYTES = 64;

const id = u32();
const count = integer("u64", { min: 1, max: Number.MAX_SAFE_INTEGER });

export const workerInput = tagged("type", {
  /** The store's limits; the worker checks them against the model and answers. */
  start: {
    threads: count,
    memory_bytes: count,
    tokens: count,
    frame_bytes: count,
    batch_items: count,
    /** Largest frame the store will send (a batch of texts at embed_input_bytes). */
    request_bytes: count,
    windows: nullable(
      object({ max: count, overlap: integer("u64", { max: Number.MAX_SAFE_INTEGER }) }),
    ),
  },
  /** Embeds texts; documents may use windows, questions never do. */
  embed: { id, kind: oneOf(["document", "question"] as const), texts: array(string()) },
});

const item = tagged("kind", {
  vectors: { windows: count, data: string() },
  refused: { code: oneOf(["windows_over_cap"] as const), windows: count },
  /** A question of more content tokens than one window holds (`most`): never truncated. */
  too_long: { tokens: count, most: count },
});

export const workerOutput = tagged("type", {
  ready: {
    protocol: u32(),
    identity: string({
      pattern: /^[0-9a-f]{64}$/,
      patternReason: "must be 64 lowercase hex digits",
    }),
    dims: count,
    max_tokens: count,
    /** Content tokens one window holds: embed_tokens less special and prefix tokens. */
    content_tokens: count,
  },
  failed: { code: string({ maxBytes: 64 }), message: string({ maxBytes: 4096 }) },
  vectors: { id, items: array(item) },
  error: { id, code: string({ maxBytes: 64 }), message: string({ maxBytes: 4096 }) },
});

export type WorkerInput = Decoded<typeof workerInput>;
export type WorkerOutput = Decoded<typeof workerOutput>;
export type StartMessage = Extract<WorkerInput, { type: "start" }>;
export type VectorsItem = Extract<WorkerOutput, { type: "vectors" }>["items"][number];

/** Codes a worker may give in `failed`; any other is taken as the worker failing. */
export const START_FAILURE_CODES = ["embed_limits", "embed_model_missing", "embed_model_mismatch"];

/** Bytes of the largest `vectors` answer: every item of a full batch at its most windows. */
export function largestAnswerBytes(dims: number, batchItems: number, windows: number): number {
  const raw = dims * windows * COMPONENT_BYTES;
  const base64 = Math.ceil(raw / 3) * 4;
  return ANSWER_OVERHEAD_BYTES + batchItems * (base64 + ITEM_OVERHEAD_BYTES);
}

/**
 * Bytes of the largest `embed` frame: a full batch of texts at the input bound, each
 * character escaped in the worst case (`\u00XX` is six bytes for one).
 */
export function largestRequestBytes(batchItems: number, inputBytes: number): number {
  return 128 + batchItems * (inputBytes * 6 + 8);
}
