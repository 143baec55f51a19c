/**
 * A batch through the fast path (expression.ts) instead of the sandbox: the records parsed by
 * the worker's own JSON parser, the query's expression evaluated on each, and the rows
 * written as the sandbox's driver writes them (`[index, output]`, an array output giving one
 * row per item). Undefined whenever the sandbox must run the batch instead: a record the
 * expression cannot evaluate exactly, an array output above `query_outputs_per_record` (the
 * sandbox refuses it with the exact message), or an output that could be larger than
 * `query_memory_bytes` (the sandbox's bound; the size is bounded before anything is built).
 */

import { type Expression, Unsupported } from "./expression.ts";

/** Bytes a node of the expression can add to one record's output besides the data it copies. */
const NODE_BYTES = 32;

export function runFastBatch(
  expression: Expression,
  args: { readonly value: unknown; readonly bytes: number },
  records: Uint8Array,
  limits: { readonly outputsPerRecord: number; readonly memoryBytes: number },
): Uint8Array | undefined {
  const text = Buffer.from(records.buffer, records.byteOffset, records.byteLength).toString();
  const list = JSON.parse(text) as unknown[];
  // The largest output the expression can build from these records, before building it.
  const bound =
    expression.refs * (records.byteLength + list.length * args.bytes) +
    list.length * (expression.nodes + 1) * NODE_BYTES;
  if (bound > limits.memoryBytes) return undefined;
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
