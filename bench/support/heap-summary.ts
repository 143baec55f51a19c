/**
 * Where a sampled process's allocations came from (a profile written by heap-sampling.ts):
 * `node bench/support/heap-summary.ts FILE [OPS] [--by-function]` prints bytes by source
 * file (or by function), and with OPS (the operations the process served, steps for the
 * workflow server) bytes per operation, largest first.
 */

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface SampleNode {
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly SampleNode[];
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { "by-function": { type: "boolean", default: false } },
});
const [file, ops] = positionals;
if (file === undefined) throw new Error("usage: heap-summary.ts FILE [OPS] [--by-function]");
const perOp = ops === undefined ? undefined : Number(ops);
const profile = JSON.parse(readFileSync(file, "utf8")) as { head: SampleNode };

function where(node: SampleNode): string {
  const { url, functionName, lineNumber } = node.callFrame;
  const source = url.includes("/src/")
    ? `src/${url.split("/src/")[1]}`
    : url.includes("node_modules/")
      ? `npm:${url.split("node_modules/")[1]!.split("/")[0]}`
      : url || "(native)";
  return values["by-function"]
    ? `${functionName || "(anonymous)"} ${source}:${lineNumber + 1}`
    : source;
}

const bytes = new Map<string, number>();
let total = 0;
const pending: SampleNode[] = [profile.head];
for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
  if (node.selfSize > 0) {
    total += node.selfSize;
    const key = where(node);
    bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
  }
  pending.push(...node.children);
}
const rows = [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 40);
console.log(
  `sampled ${(total / 1e6).toFixed(1)} MB${perOp ? `, ${(total / perOp).toFixed(0)} B per operation` : ""}`,
);
for (const [key, size] of rows) {
  const share = `${((100 * size) / total).toFixed(1)}%`.padStart(6);
  const each = perOp ? `${(size / perOp).toFixed(0).padStart(7)} B/op` : "";
  console.log(`${(size / 1e6).toFixed(1).padStart(8)} MB ${share} ${each}  ${key}`);
}
