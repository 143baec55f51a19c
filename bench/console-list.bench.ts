/**
 * `npm run bench:console-list`: the run console's list pages on the SQLite store as
 * the server opens it (`SqliteWorkflowStore`): BENCH_RUNS runs (100,000) in one namespace,
 * started from BENCH_DEFINITIONS definitions (10; the last one rare, 1 run in 1,000), then
 * pages of 100 walked with each filter: none, status, definition (common and rare), a start
 * time window, and all together. Prints ms per page (median of BENCH_PAGES pages walked by
 * cursor) for each filter, in both orders (oldest first, newest first): the cost of the
 * filters being SQL conditions on the run indexes, read forwards or backwards. BENCH_PAGES
 * (50) bounds the walk; a larger one (1000: every page of the 100,000) shows whether a deep
 * page costs what the first does.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunAppend } from "../src/workflow/engine/store.ts";
import { SqliteWorkflowStore } from "../src/workflow/persistence/sqlite/store.ts";
import type { RunOrder, RunPosition, RunQuery } from "../src/workflow/persistence/workflows.ts";
import { type BenchCase, knob, runBench } from "./harness.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/workflow/persistence/sqlite", "src/workflow/persistence/workflows.ts"];

const RUNS = knob("BENCH_RUNS", 100_000, 2_000);
const DEFINITIONS = knob("BENCH_DEFINITIONS", 10, 10);
const PAGES = knob("BENCH_PAGES", 50, 5);

const dir = await mkdtemp(join(tmpdir(), "skein-bench-list-"));
const store = SqliteWorkflowStore.open(join(dir, "skein.db"));
const workflows = store.workflows!;
const version = (d: number) => `sha256:${d.toString(16).padStart(64, "0")}`;
for (let d = 0; d < DEFINITIONS; d++) {
  await workflows.definitions.register({
    namespace: "ns",
    name: `def${d}`,
    version: version(d),
    canonical: "{}",
    registeredAt: 1,
    registeredBy: "bench",
  });
}
const rare = DEFINITIONS - 1;
const t0 = 1_700_000_000_000;
for (let base = 0; base < RUNS; base += 5000) {
  const batch: RunAppend[] = [];
  for (let i = base; i < Math.min(RUNS, base + 5000); i++) {
    const d = i % 1000 === 0 ? rare : i % (DEFINITIONS - 1);
    batch.push({
      runId: `r${String(i).padStart(8, "0")}`,
      workflowId: `w${i}`,
      namespace: "ns",
      definitionVersion: version(d),
      events: [
        {
          type: "RunStarted",
          at: t0 + i,
          workflow_id: `w${i}`,
          definition_version: version(d),
          input_json: "{}",
        },
      ],
      status: i % 10 === 0 ? "Running" : "Completed",
    });
  }
  await workflows.runs.commit(batch);
}

async function pageMs(filter: Partial<RunQuery>): Promise<{ median: number; rows: number }> {
  const times: number[] = [];
  let rows = 0;
  let after: RunPosition | undefined;
  for (let p = 0; p < PAGES; p++) {
    const start = performance.now();
    const page = await workflows.runs.list({
      namespace: "ns",
      status: undefined,
      limit: 100,
      after,
      ...filter,
    });
    times.push(performance.now() - start);
    rows += page.runs.length;
    if (page.next === undefined) break;
    after = page.next;
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)]!, rows };
}

const window = { startedAfter: t0 + RUNS / 2, startedBefore: t0 + RUNS / 2 + 20_000 };
const rows: [string, Partial<RunQuery>][] = [
  ["no filter", {}],
  ["status Running", { status: "Running" }],
  ["definition (common)", { definition: "def0" }],
  ["definition (rare, 1 in 1000)", { definition: `def${rare}` }],
  ["time window", window],
  ["definition + status + time", { definition: "def0", status: "Completed", ...window }],
];
const cases: BenchCase[] = [];
for (const order of ["oldest", "newest"] as RunOrder[]) {
  for (const [label, filter] of rows) {
    cases.push({
      name: `${label} (${order} first), ${RUNS} runs`,
      async run() {
        const { median, rows } = await pageMs({ ...filter, order });
        return { ms_per_page: Number(median.toFixed(3)), rows_read: rows };
      },
    });
  }
}
await runBench("console-list", { measures: MEASURES }, cases);
await store.close();
await rm(dir, { recursive: true, force: true });
