/**
 * A batch through the fast path (expression.ts) instead of the sandbox: the records parsed by
 * the worker's own JSON parser, the query's expression evaluated on each, and the rows
 * written as the sandbox's driver writes them (`[index, output]`, an array output giving one
 * row per item). Undefined whenever the sandbox must run the batch instead: a record the
 * expression cannot evaluate exactly, an array output above `query_outputs_per_record` (the
 * sandbox refuses it with the exact message), or a batch whose parse and outputs might not
 * fit in `query_memory_bytes` inside the sandbox (bounded before anything is built), so the
 * memory limit is met exactly where the sandbox would meet it.
 */

import { type Expression, Unsupported } from "./expression.ts";

/** Bytes a node of the expression can add to one record's output besides the data it copies. */
const NODE_BYTES = 32;
/**
 * Most bytes of QuickJS memory one byte of JSON text can take once parsed (an empty array,
 * `[]`, is two bytes of text and an object of several dozen bytes): the sandbox would parse
 * the batch inside `query_memory_bytes`, so a batch it might not fit goes to it.
 */
export const PARSE_EXPANSION = 64;
/** The runtime's own allocations (intrinsics, the driver) inside `query_memory_bytes`. */
export const RUNTIME_BYTES = 1 << 20;

export function runFastBatch(
  expression: Expression,
  args: { readonly value: unknown; readonly bytes: number },
  records: Uint8Array,
  limits: { readonly outputsPerRecord: number; readonly memoryBytes: number },
): Uint8Array | undefined {
  // What the sandbox would hold at once: the batch's text and its parse, then the outputs
  // and their JSON text. Only a batch that surely fits is taken, so the sandbox alone ever
  // meets query_memory_limit.
  const parsed = RUNTIME_BYTES + records.byteLength * (1 + PARSE_EXPANSION);
  if (parsed > limits.memoryBytes) return undefined;
  const text = Buffer.from(records.buffer, records.byteOffset, records.byteLength).toString();
  const list = JSON.parse(text) as unknown[];
  // The largest output the expression can build from these records, before building it.
  const outputs =
    expression.refs * (records.byteLength + list.length * args.bytes) +
    list.length * (expression.nodes + 1) * NODE_BYTES;
  if (parsed + 2 * outputs > limits.memoryBytes) return undefined;
  const rows: [number, unknown][] = [];
  try {
    for (let i = 0; i < list.length; i++) {
      const out = expression.evaluate(list[i], args.value);
      if (out === undefined) continue;
      if (Array.isArray(out)) {
        if (out.length > limits.outputsPerRecord) return undefined;
        for (const item of out) rows.push([i, item]);
      } else rows.push([i, out]);
    }
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  return Buffer.from(JSON.stringify(rows));
}
