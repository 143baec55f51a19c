import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, describe, test } from "node:test";
import { SkeinError } from "../../../../src/common/errors.ts";
import type { HistoryEvent } from "../../../../src/workflow/engine/history.ts";
import { listRunsSql } from "../../../../src/workflow/persistence/sql/run-rows.ts";
import { recoveryLoads } from "../../../../src/workflow/persistence/sql/runs.ts";
import { SQLITE } from "../../../../src/workflow/persistence/sqlite/dialect.ts";
import {
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  migrate,
} from "../../../../src/workflow/persistence/sqlite/migrations.ts";
import { SqliteWorkflowStore } from "../../../../src/workflow/persistence/sqlite/store.ts";
import { shardOf } from "../../../../src/workflow/persistence/store.ts";
import { databaseFromTheFuture } from "../../../support/sqlite-schema.ts";
import { workflowStoreConformance } from "../conformance.ts";

const RUN = { runId: "r", workflowId: "w", namespace: "n", definitionVersion: "v" };
const RUN_STARTED: HistoryEvent = {
  type: "RunStarted",
  at: 1,
  workflow_id: "w",
  definition_version: "v",
  input_json: "{}",
};
const timer = (at: number): HistoryEvent => ({
  type: "TimerStarted",
  at,
  timer_id: `t${at}`,
  fire_at: at,
});

const dirs: string[] = [];
async function fresh(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "skein-sqlite-"));
  dirs.push(dir);
  return join(dir, "skein.db");
}
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

workflowStoreConformance("SQLite", { fresh, open: async (file) => SqliteWorkflowStore.open(file) });

describe("SQLite workflow store: file, journal and migrations", () => {
  test("a new database is in WAL mode, synchronous FULL, at the latest schema", async () => {
    const file = await fresh();
    const store = SqliteWorkflowStore.open(file);
    assert.equal(store.schemaVersion, LATEST_SCHEMA_VERSION);
    await store.close();
    const db = new DatabaseSync(file);
    assert.equal(
      (db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode,
      "wal",
    );
    const rows = db.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all();
    assert.deepEqual(
      rows.map((r) => ({ ...r })),
      MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
    );
    db.close();
  });

  test("reopening applies nothing twice", async () => {
    const file = await fresh();
    await SqliteWorkflowStore.open(file).close();
    await SqliteWorkflowStore.open(file).close();
    const db = new DatabaseSync(file);
    const { n } = db.prepare("SELECT count(*) AS n FROM schema_migrations").get() as { n: number };
    assert.equal(n, MIGRATIONS.length);
    db.close();
  });

  test("a later migration is applied to an older database", async () => {
    const file = await fresh();
    const db = new DatabaseSync(file);
    assert.equal(migrate(db, file, MIGRATIONS), LATEST_SCHEMA_VERSION);
    const next = LATEST_SCHEMA_VERSION + 1;
    const extra = [
      ...MIGRATIONS,
      { version: next, name: "extra", sql: "CREATE TABLE extra (x INTEGER) STRICT" },
    ];
    assert.equal(migrate(db, file, extra), next);
    db.prepare("INSERT INTO extra (x) VALUES (1)").run();
    db.close();
  });

  test("migrations 10 to 12 (no stored position; events in commit order, one row per append) keep an older database's runs", async () => {
    const file = await fresh();
    const db = new DatabaseSync(file);
    migrate(db, file, MIGRATIONS.slice(0, 9));
    db.exec(
      "INSERT INTO workflow_runs (run_id, namespace, workflow_id, definition_version, status, " +
        "started_at, updated_at, next_seq) VALUES ('r', 'n', 'w', 'v', 'Running', 1, 2, 2)",
    );
    const insert = db.prepare(
      "INSERT INTO workflow_events (run_id, seq, event) VALUES ('r', ?, ?)",
    );
    insert.run(0, JSON.stringify(RUN_STARTED));
    insert.run(1, JSON.stringify(timer(2)));
    db.close();
    const store = SqliteWorkflowStore.open(file);
    try {
      await store.workflows.runs.commit([
        { ...RUN, events: [timer(3), timer(4)], status: "Running" },
      ]);
      const at = async (range?: { after: number; limit: number }) =>
        (await store.workflows.runs.history("r", range))?.map((e) => e.at);
      // Rows of one event (written before) and of two (one append) read as one history.
      assert.deepEqual(await at(), [1, 2, 3, 4]);
      assert.deepEqual(await at({ after: 1, limit: 2 }), [2, 3]);
      assert.deepEqual(await at({ after: 3, limit: 5 }), [4]);
      assert.equal((await store.workflows.runs.byWorkflowId("n", "w"))?.updatedAt, 4);
    } finally {
      await store.close();
    }
    // A store that did not load the run continues after the last row's last event.
    const again = SqliteWorkflowStore.open(file);
    try {
      await again.workflows.runs.commit([{ ...RUN, events: [timer(5)], status: "Running" }]);
      assert.deepEqual(
        (await again.workflows.runs.history("r"))?.map((e) => e.at),
        [1, 2, 3, 4, 5],
      );
    } finally {
      await again.close();
    }
    // A run's position is still unique: an event written twice is refused.
    const after = new DatabaseSync(file);
    assert.throws(
      () => after.exec("INSERT INTO workflow_events (run_id, seq, event) VALUES ('r', 1, '{}')"),
      /UNIQUE constraint failed/,
    );
    after.close();
  });

  test("a step of a live run appends its events and leaves the run's row alone", async () => {
    const file = await fresh();
    type Batch = Parameters<SqliteWorkflowStore["workflows"]["runs"]["commit"]>[0];
    /** Commits each batch in turn on one store that loaded the live runs first. */
    const commits = async (...batches: Batch[]) => {
      const store = SqliteWorkflowStore.open(file);
      try {
        await store.workflows.runs.loadRunning();
        for (const batch of batches) await store.workflows.runs.commit(batch);
      } finally {
        await store.close();
      }
    };
    const rowWrites = () => {
      const db = new DatabaseSync(file);
      const { n } = db.prepare("SELECT n FROM row_writes").get() as { n: number };
      db.close();
      return n;
    };
    await commits([{ ...RUN, events: [RUN_STARTED], status: "Running" }]);
    // Every rewrite of the row counts (an upsert's update fires the update trigger).
    const db = new DatabaseSync(file);
    db.exec(
      "CREATE TABLE row_writes (n INTEGER NOT NULL); INSERT INTO row_writes VALUES (0); " +
        "CREATE TRIGGER count_row_writes AFTER UPDATE ON workflow_runs " +
        "BEGIN UPDATE row_writes SET n = n + 1; END;",
    );
    db.close();
    const step = (at: number, status: "Running" | "Paused"): Batch => [
      { ...RUN, events: [timer(at)], status },
    ];
    await commits(step(2, "Running"), step(3, "Running"));
    assert.equal(rowWrites(), 0, "steps of a live run");
    await commits([{ ...RUN, events: [{ type: "RunPaused", at: 4 }], status: "Paused" }]);
    await commits(step(5, "Paused"));
    await commits([
      { ...RUN, events: [{ type: "RunCompleted", at: 6, output_json: "1" }], status: "Completed" },
    ]);
    assert.equal(rowWrites(), 2, "the pause and the end, not the step while paused");
  });

  test("a database newer than this build is refused: storage_schema_too_new", async () => {
    const file = await fresh();
    await databaseFromTheFuture(file);
    assert.throws(
      () => SqliteWorkflowStore.open(file),
      (error: unknown) =>
        error instanceof SkeinError &&
        error.code === "storage_schema_too_new" &&
        error.message.includes(`schema version ${LATEST_SCHEMA_VERSION + 1}`),
    );
  });

  test("one store per file: a second open is refused while the first holds it", async () => {
    const file = await fresh();
    const first = SqliteWorkflowStore.open(file);
    assert.throws(
      () => SqliteWorkflowStore.open(file),
      (error: unknown) =>
        error instanceof SkeinError &&
        error.code === "storage_unavailable" &&
        error.message.includes("in use by another process"),
    );
    await first.close();
    await SqliteWorkflowStore.open(file).close();
  });

  test("recovery's loads search the live runs' partial index, never a scan of every run (migration 13)", async () => {
    const file = await fresh();
    await SqliteWorkflowStore.open(file).close();
    const db = new DatabaseSync(file);
    const { running, events } = recoveryLoads(false);
    const planOf = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
        .map((p) => p.detail)
        .join("\n");
    const runsPlan = planOf(running);
    const eventsPlan = planOf(events);
    const indexes = db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'workflow_runs'")
      .all() as { name: string }[];
    db.close();
    assert.match(runsPlan, /SEARCH r USING INDEX workflow_runs_live \(status=\?\)/);
    assert.doesNotMatch(runsPlan, /SCAN/);
    assert.match(eventsPlan, /SEARCH r USING INDEX workflow_runs_live \(status=\?\)/);
    assert.match(eventsPlan, /SEARCH workflow_events USING INDEX workflow_events_by_run/);
    // The index no query used is gone: a start and an end write no entry of it.
    assert.ok(!indexes.some((i) => i.name === "workflow_runs_running"));
  });

  for (const order of ["oldest", "newest"] as const) {
    test(`a list (${order} first) reads a run index in order: by status the (namespace, status) one, by definition the (namespace, version) one, never a sort`, async () => {
      const file = await fresh();
      await SqliteWorkflowStore.open(file).close();
      const db = new DatabaseSync(file);
      const planOf = (query: Partial<Parameters<typeof listRunsSql>[0]>, versions?: string[]) => {
        const base = { namespace: "ns", status: undefined, limit: 1, after: undefined, order };
        const { sql, params } = listRunsSql({ ...base, ...query }, SQLITE, versions);
        const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
        return rows.map((p) => p.detail).join("\n");
      };
      const cursor = { startedAt: 5, runId: "r" };
      const byStatus = planOf({ status: "Running" });
      // Every filter at once: a search of one of the run indexes (the planner picks), the
      // definition's versions found by their index; never a scan of every run.
      const filtered = planOf({
        status: "Running",
        definition: "d",
        startedAfter: 1,
        startedBefore: 2,
      });
      const byStart = planOf({ definition: "d" });
      // A later page starts at its cursor: the position is part of the index range.
      const deep = planOf({ after: cursor });
      const deepByStatus = planOf({ status: "Failed", after: cursor });
      const deepInWindow = planOf({ startedAfter: 1, startedBefore: 9, after: cursor });
      // A definition's versions known (migration 9): one range of the (namespace,
      // definition_version, started_at, run_id) index per version from the cursor on, merged
      // in order, so a rare definition reads only its own runs.
      const byVersion = planOf({ definition: "d", after: cursor }, ["v1"]);
      const byVersions = planOf({ definition: "d", after: cursor }, ["v1", "v2", "v3"]);
      // The definition version is in the start-time index entries (migration 8): a list by
      // definition tests each run there, not in its row, the same cost in either direction.
      const columns = db.prepare("PRAGMA index_info(workflow_runs_by_start)").all() as {
        name: string;
      }[];
      db.close();
      assert.deepEqual(
        columns.map((c) => c.name),
        ["namespace", "started_at", "run_id", "definition_version"],
      );
      assert.match(byStatus, /workflow_runs_by_status \(namespace=\? AND status=\?/);
      assert.match(
        filtered,
        /SEARCH workflow_runs USING INDEX workflow_runs_by_(status|start) \(namespace=\?/,
      );
      assert.match(filtered, /SEARCH workflow_definitions USING INDEX workflow_definitions_latest/);
      assert.doesNotMatch(filtered, /SCAN workflow_runs/);
      assert.match(byStart, /workflow_runs_by_start \(namespace=\?/);
      const range = order === "newest" ? "<" : ">";
      assert.ok(
        deep.includes(`workflow_runs_by_start (namespace=? AND (started_at,run_id)${range}(?,?))`),
        deep,
      );
      assert.ok(
        deepByStatus.includes(
          `workflow_runs_by_status (namespace=? AND status=? AND (started_at,run_id)${range}(?,?)`,
        ),
        deepByStatus,
      );
      assert.ok(deepInWindow.includes(`(started_at,run_id)${range}(?,?)`), deepInWindow);
      const versionRange = `workflow_runs_by_definition (namespace=? AND definition_version=? AND (started_at,run_id)${range}(?,?))`;
      assert.ok(byVersion.includes(versionRange), byVersion);
      assert.equal(byVersions.split(versionRange).length - 1, 3, byVersions);
      assert.match(byVersions, /MERGE \(UNION ALL\)/);
      const plans = [byStatus, filtered, byStart, deep, deepByStatus, deepInWindow];
      for (const plan of [...plans, byVersion, byVersions]) {
        assert.doesNotMatch(plan, /TEMP B-TREE/, "the index gives the order: no sort");
      }
    });
  }

  test("a file that is not a database is refused: storage_unavailable", async () => {
    const file = await fresh();
    const { writeFile } = await import("node:fs/promises");
    await writeFile(
      file,
      "this is not sqlite, just text that is long enough to matter ".repeat(20),
    );
    assert.throws(
      () => SqliteWorkflowStore.open(file),
      (error: unknown) => error instanceof SkeinError && error.code === "storage_unavailable",
    );
  });
});

describe("shards", () => {
  test("shardOf is stable, in range and spreads keys", () => {
    assert.equal(shardOf("ns/run-1", 16), shardOf("ns/run-1", 16));
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 1600; i++) {
      const s = shardOf(`key-${i}`, 16);
      assert.ok(s >= 0 && s < 16);
      counts[s]!++;
    }
    assert.ok(Math.min(...counts) > 50, `uneven: ${counts}`);
  });
});
