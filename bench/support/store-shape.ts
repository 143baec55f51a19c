/**
 * The store benchmarks' data shape (JSON records of about 200 bytes under keys like
 * doc-000123) and the diff they time, shared by `bench:store` and the profiling script
 * (store-profile.ts) so both measure the same work.
 */

import type { Store } from "../../src/store/engine/index.ts";

export const key = (i: number) => `doc-${String(i).padStart(6, "0")}`;

export const record = (i: number, tag = "v") => ({
  id: i,
  tag,
  title: `Record number ${i}`,
  body: "lorem ipsum dolor sit amet ".repeat(5),
  tags: ["alpha", "beta", "gamma"],
});

/** Every change on `branch` since its version `from`, page by page: changes seen, nodes loaded. */
export function changesSince(
  store: Store,
  collection: string,
  branch: string,
  from: number,
): { seen: number; loaded: number } {
  let loaded = 0;
  let seen = 0;
  let cursor: string | undefined;
  do {
    const page = store.changes({
      collection,
      branch,
      fromBranch: branch,
      from,
      to: undefined,
      limit: 1000,
      cursor,
    });
    loaded += page.nodes_loaded;
    seen += page.changes.length;
    cursor = page.cursor ?? undefined;
  } while (cursor !== undefined);
  return { seen, loaded };
}
