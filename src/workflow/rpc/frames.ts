/**
 * Decoders for what a worker sends. protobuf gives the frames their types; these decoders add
 * the rules protobuf cannot state (non-empty names, a concurrency of at least 1, a UUID run
 * id, an attempt from 1), once, at the edge of the matcher, with the decoding core's
 * path-naming refusals (`hello.actions[0].action: must not be empty`).
 */

import { array, type Decoded, object, string, u32 } from "../../common/decode/index.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const MAX_CONCURRENCY = 4096;

const name = string({ minBytes: 1, maxBytes: 256 });

export const attemptRefDecoder = object({
  run_id: string({ pattern: UUID, patternReason: "must be a UUID" }),
  activity_id: u32(),
  attempt: u32({ min: 1 }),
});

export const helloDecoder = object({
  name,
  kind: string({ minBytes: 1, maxBytes: 64 }),
  namespace: name,
  task_queue: name,
  concurrency: u32({ min: 1, max: MAX_CONCURRENCY }),
  deployment: string({ maxBytes: 1024 }),
  actions: array(
    object({ action: name, capabilities: array(string({ minBytes: 1, maxBytes: 64 })) }),
    { min: 1, max: 4096 },
  ),
  instance_id: string({ maxBytes: 128 }),
  running: array(object({ ref: attemptRefDecoder, action: name }), { max: MAX_CONCURRENCY * 4 }),
});

export type DecodedHello = Decoded<typeof helloDecoder>;
