// The SQLite store as the server runs it, with its connection on a thread of its own: the
// same conformance suites as the in-process store, refusals that keep their codes across the
// thread boundary, calls served in the order they were made, and a closed store that refuses.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, test } from "node:test";
import { SkeinError } from "../../../../src/common/errors.ts";
import type { HistoryEvent } from "../../../../src/workflow/engine/history.ts";
import { LATEST_SCHEMA_VERSION } from "../../../../src/workflow/persistence/sqlite/migrations.ts";
import { ThreadedSqliteStore } from "../../../../src/workflow/persistence/sqlite/threaded-store.ts";
import { databaseFromTheFuture } from "../../../support/sqlite-schema.ts";
import { threadedStores } from "../../../support/threaded-stores.ts";
import { workflowStoreConformance } from "../conformance.ts";
import { started, V1 } from "../workflows-conformance.ts";

const { fresh, open } = threadedStores("skein-sqlite-thread-");

function refusal(code: string, text?: string) {
  return (error: unknown) =>
    error instanceof SkeinError &&
    error.code === code &&
    (text === undefined || error.message.includes(text));
}

const id = { runId: "r", workflowId: "w", namespace: "n", definitionVersion: V1 };
const timer = (at: number): HistoryEvent => ({
  type: "TimerStarted",
  at,
  timer_id: `t${at}`,
  fire_at: at + 1,
});

workflowStoreConformance("SQLite on its own thread", { fresh, open: (file) => open(file) });

describe("threaded SQLite store: refusals cross the thread with their codes", () => {
  test("a new database reports the latest schema version", async () => {
    const store = await open();
    assert.equal(store.schemaVersion, LATEST_SCHEMA_VERSION);
    assert.equal(store.backend, "sqlite");
  });

  test("a database newer than this build: storage_schema_too_new", async () => {
    const file = await fresh();
    await databaseFromTheFuture(file);
    await assert.rejects(ThreadedSqliteStore.open(file), refusal("storage_schema_too_new"));
  });

  test("a file another store holds: storage_unavailable, and free again once closed", async () => {
    const file = await fresh();
    const first = await ThreadedSqliteStore.open(file);
    await assert.rejects(
      ThreadedSqliteStore.open(file),
      refusal("storage_unavailable", "in use by another process"),
    );
    await first.close();
    await (await ThreadedSqliteStore.open(file)).close();
  });

  test("a file that is not a database: storage_unavailable", async () => {
    const file = await fresh();
    await writeFile(file, "not sqlite, only text long enough to look like a header ".repeat(20));
    await assert.rejects(ThreadedSqliteStore.open(file), refusal("storage_unavailable"));
  });

  test("a failed commit rejects with SQLite's error and leaves the store serving", async () => {
    const file = await fresh();
    const first = await ThreadedSqliteStore.open(file);
    await first.workflows.runs.commit([{ ...id, events: [started(1, "w")], status: "Running" }]);
    await first.close();
    // Reopened, the store does not know run r: a second RunStarted inserts its row again.
    const store = await open(file);
    const runs = store.workflows.runs;
    const other = { ...id, runId: "r2", workflowId: "w2" };
    await assert.rejects(
      runs.commit([
        { ...other, events: [started(2, "w2")], status: "Running" },
        { ...id, events: [started(2, "w")], status: "Running" },
      ]),
      (error: unknown) =>
        error instanceof Error && !(error instanceof SkeinError) && /UNIQUE/.test(error.message),
    );
    // Rolled back whole: the other run of that batch is not there.
    assert.equal(await runs.history("r2"), undefined);
    await runs.commit([{ ...id, events: [timer(3)], status: "Running" }]);
    assert.deepEqual(
      (await runs.history("r"))?.map((e) => e.type),
      ["RunStarted", "TimerStarted"],
    );
  });
});

describe("threaded SQLite store: order and closing", () => {
  test("calls are served in the order made: a read sees every commit sent before it", async () => {
    const store = await open();
    const runs = store.workflows.runs;
    const commits = [runs.commit([{ ...id, events: [started(1, "w")], status: "Running" }])];
    for (let at = 2; at <= 200; at++) {
      commits.push(runs.commit([{ ...id, events: [timer(at)], status: "Running" }]));
    }
    const read = runs.history("r");
    await Promise.all(commits);
    const events = (await read)!;
    assert.equal(events.length, 200);
    assert.deepEqual(
      events.map((e) => e.at),
      Array.from({ length: 200 }, (_, i) => i + 1),
    );
  });

  test("close waits for calls already made; later calls are refused: storage_unavailable", async () => {
    const file = await fresh();
    const store = await ThreadedSqliteStore.open(file);
    const made = store.namespaces.create({ name: "late", createdBy: "t", createdAt: 1 });
    const closed = store.close();
    await assert.rejects(store.namespaces.list(), refusal("storage_unavailable", "closed"));
    await closed;
    assert.equal((await made).created, true);
    const reopened = await open(file);
    assert.deepEqual(
      (await reopened.namespaces.list()).map((n) => n.name),
      ["late"],
    );
  });
});

describe("threaded SQLite store: online backup", () => {
  // 50 runs with a 2 KB input each: a commit long enough that a backup step started beside
  // the queue lands inside one (SQLite answers such a step SQLITE_LOCKED).
  const batch = (n: number) =>
    Array.from({ length: 50 }, (_, i) => ({
      runId: `r${n}-${i}`,
      workflowId: `w${n}-${i}`,
      namespace: "n",
      definitionVersion: V1,
      events: [{ ...started(n, `w${n}-${i}`), input_json: JSON.stringify("x".repeat(2000)) }],
      status: "Running" as const,
    }));
  const runsIn = (file: string) => {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      return (db.prepare("SELECT count(*) AS n FROM workflow_runs").get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  test("backups under sustained commits complete, each holding every commit acknowledged before it", {
    timeout: 120_000,
  }, async () => {
    const file = await fresh();
    const store = await open(file);
    const runs = store.workflows.runs;
    let next = 0;
    while (next < 20) await runs.commit(batch(next++));
    for (let round = 0; round < 3; round++) {
      const acknowledged = next * 50;
      const target = join(dirname(file), `copy-${round}.db`);
      let copying = true;
      const copy = store.backup(target).finally(() => (copying = false));
      // Sustained writes: a commit is always queued while the backup runs.
      const lanes = [0, 1, 2, 3].map(async () => {
        while (copying) await runs.commit(batch(next++));
      });
      const result = await copy;
      await Promise.all(lanes);
      assert.equal(result.path, target);
      assert.ok(runsIn(target) >= acknowledged, `copy ${round} holds the ${acknowledged} runs`);
    }
  });
});
