/**
 * The store's own check of QUERY_OUTPUT_DEPTH on the rows a worker sent, which the shipped
 * worker already enforces in its sandbox: a worker is any executable, and an output nested
 * a few thousand levels deep would overflow the stack of the store's reply encoder (a
 * recursive MessagePack writer) while it answers the caller. The walk is iterative, so
 * measuring a deep value cannot overflow anything itself, and it stops at the bound.
 */

/** Whether `value` nests more than `limit` levels of arrays and objects (itself level 1). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop()!;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (typeof child === "object" && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
