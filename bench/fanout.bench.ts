/**
 * `npm run bench:fanout`: one `collect` of N no-op members (10,000 by default) through the
 * engine, the outbox dispatcher (ceiling 1024 per namespace), the matcher and one real
 * `skein worker` process at `--concurrency 64`. Prints members/s (from the run's start to its
 * durable end), the highest claimed-row count the dispatcher held, and the highest claimed
 * count sampled from storage while the run went on; neither may exceed the ceiling.
 *
 * The store is the server's own SQLite run store (WAL, synchronous = FULL, on its own thread).
 * Knobs (environment): BENCH_MEMBERS (10000), BENCH_CEILING (1024), BENCH_CONCURRENCY (64).
 */

import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDefinition } from "../src/workflow/definitions/index.ts";
import { Engine, type RunState } from "../src/workflow/engine/index.ts";
import { ThreadedSqliteStore } from "../src/workflow/persistence/sqlite/threaded-store.ts";
import { startWorkerEndpoint } from "../src/workflow/rpc/server.ts";
import { knob, runBench } from "./harness.ts";
import { spawnNoopWorkers } from "./support/noop-workers.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = [
  "src/workflow/engine",
  "src/workflow/persistence/sqlite",
  "src/workflow/matching",
];

const N = knob("BENCH_MEMBERS", 10_000, 200);
const CEILING = knob("BENCH_CEILING", 1024, 1024);
const CONCURRENCY = knob("BENCH_CONCURRENCY", 64, 64);

const dir = await mkdtemp(join(tmpdir(), "skein-bench-fanout-"));
// The server's own run store: SQLite (WAL, synchronous commits), outbox rows in the commits.
const database = await ThreadedSqliteStore.open(join(dir, "skein.db"));
const store = database.workflows.runs;

const definition = parseDefinition(
  `name: fanout
task_queue: q
steps:
  - id: each
    collect:
      items: input.items
      max_items: ${Math.max(N, 1)}
      step: { id: one, call: { action: noop, input: "{ 'i': item }" } }
output: "$count(steps.each)"
`,
  "yaml",
);

let ended: (state: RunState) => void = () => {};
const engine = new Engine({
  store,
  definitions: async () => definition,
  onRunEnded: (_, state) => ended(state),
  outbox: { enabled: true, maxInFlight: CEILING },
});
const endpoint = await startWorkerEndpoint("127.0.0.1:0", {
  verify: async () => ({ subject: "bench", worker: true, namespaces: "*" }),
  namespaceGate: async () => true,
  events: engine.matcherEvents,
});
engine.attach(endpoint.matcher);

const workers = await spawnNoopWorkers({
  dir,
  port: endpoint.port,
  count: 1,
  concurrency: CONCURRENCY,
  sessions: () => endpoint.matcher.stats().sessions,
});

/** Claimed rows in storage now. */
async function storedClaimed(): Promise<number> {
  return (await store.loadOutbox()).filter((r) => r.state === "claimed").length;
}

await runBench("fanout", { measures: MEASURES }, [
  {
    name: `collect of ${N} no-op members, ceiling ${CEILING}, worker concurrency ${CONCURRENCY}, server SQLite store`,
    async run() {
      let sampling = true;
      let maxStored = 0;
      let samples = 0;
      const sampler = (async () => {
        while (sampling) {
          maxStored = Math.max(maxStored, await storedClaimed());
          samples++;
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const done = new Promise<RunState>((resolve) => {
        ended = resolve;
      });
      const t0 = performance.now();
      const runId = randomUUID();
      await engine.start({
        runId,
        workflowId: runId,
        namespace: "default",
        definition,
        inputJson: JSON.stringify({ items: Array.from({ length: N }, (_, i) => i) }),
      });
      const state = await done;
      const seconds = (performance.now() - t0) / 1000;
      sampling = false;
      await sampler;
      if (state.status !== "Completed") throw new Error(`the run ended ${state.status}`);
      if (engine.maxClaimed > CEILING || maxStored > CEILING) {
        throw new Error(`claimed rows exceeded the ceiling: ${engine.maxClaimed} / ${maxStored}`);
      }
      return {
        "members/s": Math.round(N / seconds),
        seconds: Number(seconds.toFixed(2)),
        "max claimed (dispatcher)": engine.maxClaimed,
        "max claimed (storage samples)": maxStored,
        "storage samples": samples,
        ceiling: CEILING,
      };
    },
  },
]);

engine.close();
for (const w of workers) w.kill();
await endpoint.close();
await database.close();
await rm(dir, { recursive: true, force: true });
