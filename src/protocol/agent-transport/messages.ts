/**
 * The agent transport's wire protocol, one definition for both ends. Every message is a JSON
 * text frame tagged by `type`; each side decodes what it receives with the decoders here
 * (`readMessage`) before using it, so a peer that sends anything else (not JSON, a binary
 * frame, nesting deeper than `MAX_MESSAGE_DEPTH`, a missing or mistyped field, an unknown
 * type) gets its socket closed with a named refusal and nothing else happens.
 *
 * An intervention is committed in two steps so that `StaleTarget` and an application never
 * both happen: the server sends `control`; the worker checks it can apply it, holds it and
 * answers `ready` (or answers `outcome` with why it cannot); the server, if the caller is
 * still waiting, answers the caller `Applied` and sends `commit`, after which the worker
 * applies it; if the caller was already answered `StaleTarget` (no answer in time) it sends
 * `withdraw` instead and the worker drops it. The worker never applies a control without a
 * `commit`, so no clock and no message age are trusted. `apply` is the server's own Cancel
 * (the engine gave the attempt up): nobody waits for it, it is applied when it arrives.
 */

import { parse as parseLossless, stringify } from "lossless-json";
import {
  array,
  boolean,
  type Decoded,
  DecodeError,
  type Decoder,
  nullable,
  object,
  oneOf,
  optional,
  refuse,
  string,
  tagged,
  u32,
} from "../../common/decode/index.ts";
import { namespaceName } from "../namespace-name.ts";
import { CAPABILITIES, interventionKind } from "./interventions.ts";

/** Largest frame either end accepts (the `ws` maxPayload); a transcript entry fits easily. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Deepest nesting of arrays and objects in a message. Our own messages nest 6 levels (a
 * control inside a transcript entry); model output echoed into a transcript (tool calls)
 * gets the rest. The bound keeps the parser's recursion and every later JSON.stringify of a
 * stored entry far from the stack's limit.
 */
export const MAX_MESSAGE_DEPTH = 32;

/** WebSocket close codes of the refusals (RFC 6455 §7.4.1). */
export const CLOSE_POLICY = 1008;
export const CLOSE_UNSUPPORTED = 1003;
/** A close reason is at most 123 bytes of UTF-8 (RFC 6455 §5.5.1). */
const CLOSE_REASON_BYTES = 123;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const uuid = () =>
  string({ pattern: UUID, patternReason: "must be a UUID string", expected: "UUID string" });

/** Any JSON value, kept as parsed: model output echoed in a transcript entry. */
const anyJson: Decoder<unknown> = { expected: "any JSON value", run: (value) => value };

export const attemptRef = object({ run_id: uuid(), activity_id: u32(), attempt: u32() });

/** An intervention as the worker receives it: the kind, who issued it and when. */
export const control = object({
  kind: interventionKind,
  subject: string(),
  /** RFC 3339 time the server accepted it. */
  at: string(),
});

/**
 * Transcript entries, by `type`. Fields the worker makes are typed; fields that echo the
 * model's reply (content, tool calls, ids, token counts) are any JSON, since a model's odd
 * reply must not cost the worker its transport.
 */
export const transcriptEntry = tagged("type", {
  user_turn: { text: string(), source: oneOf(["input", "intervention"]) },
  model_turn: { content: anyJson, tool_calls: array(anyJson), tokens: anyJson },
  /** `server` and `tool`: an MCP tool's server key and its own name on that server. */
  tool_call: {
    call_id: anyJson,
    name: anyJson,
    arguments: anyJson,
    server: optional(string()),
    tool: optional(string()),
  },
  /** `is_error`: an MCP tool's answer was an error result (the store's code in its text). */
  tool_result: { call_id: anyJson, content: string(), is_error: optional(boolean()) },
  /** Where the attempt's store tools work: a branch of a collection, made from `base`. */
  workspace: {
    server: string(),
    url: string(),
    collection: string(),
    branch: string(),
    base: string(),
    /** True when this attempt made the branch; false when it was there already. */
    created: boolean(),
    door: optional(object({ origin: string(), store: string() })),
  },
  approval: {
    call_id: anyJson,
    state: oneOf(["pending", "approved", "denied"]),
    note: optional(nullable(string())),
  },
  control: { control },
  interrupted: {},
  end: {
    reason: oneOf(["max_turns", "max_tokens"]),
    turns: optional(u32()),
    tokens: optional(anyJson),
  },
});

const controlId = uuid();

/** Worker → server. */
export const workerMessage = tagged("type", {
  /** The attempt runs here, held by gRPC session `session_id` (from its welcome). */
  live: {
    ref: attemptRef,
    namespace: namespaceName(),
    workflow_id: uuid(),
    session_id: uuid(),
    capabilities: array(oneOf(CAPABILITIES), { max: CAPABILITIES.length }),
  },
  ended: { ref: attemptRef },
  transcript: { ref: attemptRef, entry: transcriptEntry },
  /** The control can be applied and is held until `commit` or `withdraw`. */
  ready: { id: controlId },
  /** The control cannot be applied; never `Applied` (that is the server's answer to `ready`). */
  outcome: { id: controlId, outcome: oneOf(["CapabilityNotSupported", "StaleTarget"]) },
});

/** Server → worker. */
export const serverMessage = tagged("type", {
  control: { id: controlId, ref: attemptRef, control },
  commit: { id: controlId },
  withdraw: { id: controlId },
  apply: { ref: attemptRef, control },
});

export type Control = Decoded<typeof control>;
export type TranscriptEntry = Decoded<typeof transcriptEntry>;
export type WorkerMessage = Decoded<typeof workerMessage>;
export type ServerMessage = Decoded<typeof serverMessage>;

/** A message as JSON text; u64 values (budgets) are written exactly. */
export function encodeMessage(message: WorkerMessage | ServerMessage): string {
  return encodeJson(message);
}

/** A decoded value (bigints, parsed numbers kept as their text) as JSON text. */
export function encodeJson(value: unknown): string {
  return stringify(value) ?? "null";
}

/** Why a frame was refused: the close code and reason to close its socket with. */
export interface Refusal {
  readonly code: number;
  readonly reason: string;
}

export type ReadResult<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

/** Decodes one received frame: JSON text within the depth bound, then the decoder. */
export function readMessage<T>(
  decoder: Decoder<T>,
  data: Buffer | ArrayBuffer | Buffer[],
  isBinary: boolean,
): ReadResult<T> {
  if (isBinary) {
    return refused(CLOSE_UNSUPPORTED, "binary frames are not accepted; messages are JSON text");
  }
  const bytes = Array.isArray(data)
    ? Buffer.concat(data)
    : Buffer.isBuffer(data)
      ? data
      : Buffer.from(data);
  try {
    return { ok: true, value: decoder.run(parseMessageJson(bytes.toString("utf8")), undefined) };
  } catch (error) {
    if (error instanceof DecodeError) return refused(CLOSE_POLICY, error.message);
    throw error;
  }
}

function parseMessageJson(text: string): unknown {
  const depth = nestingDepth(text);
  if (depth > MAX_MESSAGE_DEPTH) {
    refuse("shape", undefined, `nested ${depth} levels or more; at most ${MAX_MESSAGE_DEPTH}`);
  }
  try {
    return parseLossless(text);
  } catch (error) {
    if (error instanceof DecodeError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    return refuse("type", undefined, `not valid JSON: ${reason}`);
  }
}

/**
 * The deepest nesting of arrays and objects in JSON text, counted before parsing so deep
 * input never reaches the parser's recursion; stops counting one past the bound.
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > MAX_MESSAGE_DEPTH) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

function refused(code: number, reason: string): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { code, reason: closeReason(`invalid_message: ${reason}`) } };
}

/** A close reason cut to the 123 bytes a close frame carries, never inside a character. */
export function closeReason(text: string): string {
  if (Buffer.byteLength(text, "utf8") <= CLOSE_REASON_BYTES) return text;
  let out = "";
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, "utf8");
    if (bytes + n > CLOSE_REASON_BYTES - 3) break;
    out += ch;
    bytes += n;
  }
  return `${out}...`;
}
