import assert from "node:assert/strict";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { SkeinError } from "../../../src/common/errors.ts";
import type { QuerySettings } from "../../../src/store/config/types.ts";
import { QueryService } from "../../../src/store/query/service.ts";
import { servedStore } from "../transport/fixture.ts";

/** The shipped worker, as a service file names it. */
export const WORKER = fileURLToPath(new URL("../../../bin/skein-query-worker", import.meta.url));

export function settings(over: Partial<QuerySettings> = {}): QuerySettings {
  return {
    query_worker: WORKER,
    query_time_ms: 2000n,
    query_memory_bytes: 32n << 20n,
    query_outputs_per_record: 3n,
    query_scan_records: 1000n,
    query_max_running: 2n,
    ...over,
  };
}

/** A real store on a real socket with a real query service, and one client. */
export async function servedQueries(over: Partial<QuerySettings> = {}) {
  const queries = await QueryService.start(settings(over));
  after(() => queries.close());
  const served = await servedStore({ queries }, { maxPage: 50 });
  const client = await served.connect({ timeoutMs: 20_000 });
  return { ...served, client, queries };
}

export async function refused(promise: Promise<unknown>, code: string): Promise<SkeinError> {
  let caught: SkeinError | undefined;
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof SkeinError, String(error));
    assert.equal(error.code, code, error.message);
    caught = error;
    return true;
  });
  return caught!;
}

export function records(n: number, from = 0) {
  return Array.from({ length: n }, (_, i) => ({
    key: `doc-${String(from + i).padStart(4, "0")}`,
    value: { n: from + i, tag: (from + i) % 2 === 0 ? "even" : "odd" },
  }));
}
