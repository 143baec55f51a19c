// What the SQLite store's main thread remembers of its database (writer-memory.ts), through
// the real threaded store: a remembered read answers as the thread would at the same point
// of the call order. A change forgets at once, a read made before a change is not kept past
// it, a run started here has no transcribed attempts until an entry is appended (even one
// appended before its start commit), and each table is bounded.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { HistoryEvent } from "../../../../src/workflow/engine/history.ts";
import { SqlNamespaceStore } from "../../../../src/workflow/persistence/sql/namespaces.ts";
import { openDatabase } from "../../../../src/workflow/persistence/sqlite/database.ts";
import { SqliteDatabase } from "../../../../src/workflow/persistence/sqlite/driver.ts";
import { migrate } from "../../../../src/workflow/persistence/sqlite/migrations.ts";
import { ThreadedSqliteStore } from "../../../../src/workflow/persistence/sqlite/threaded-store.ts";
import { WriterMemory } from "../../../../src/workflow/persistence/sqlite/writer-memory.ts";
import { threadedStores } from "../../../support/threaded-stores.ts";
import { started, V1 } from "../workflows-conformance.ts";

const { fresh, open } = threadedStores("skein-writer-memory-");

const namespace = (name: string) => ({ name, createdBy: "test", createdAt: 1 });
const definition = (name: string, version: string, registeredAt: number) => ({
  namespace: "n",
  name,
  version,
  canonical: `{"name":"${name}"}`,
  registeredAt,
  registeredBy: "test",
});
const V2 = `sha256:${"02".repeat(32)}`;

describe("the SQLite store's memory of its database", () => {
  test("a read is remembered, frozen, and answered again without the thread", async () => {
    const store = await open();
    await store.namespaces.create(namespace("a"));
    const before = store.memory.size;
    const first = await store.namespaces.get("a");
    assert.equal(store.memory.size, before + 1);
    assert.ok(Object.isFrozen(first));
    assert.equal(await store.namespaces.get("a"), first, "the remembered record");
    // An absent namespace is remembered too, until a creation forgets it.
    assert.equal(await store.namespaces.get("b"), undefined);
    await store.namespaces.create(namespace("b"));
    assert.equal((await store.namespaces.get("b"))?.name, "b");
  });

  test("a deletion forgets the namespace and its definitions' latest", async () => {
    const store = await open();
    await store.namespaces.create(namespace("n"));
    await store.workflows.definitions.register(definition("d", V1, 1));
    assert.equal((await store.workflows.definitions.latest("n", "d"))?.version, V1);
    assert.equal((await store.namespaces.delete("n")).outcome, "deleted");
    assert.equal(await store.namespaces.get("n"), undefined);
    assert.equal(await store.workflows.definitions.latest("n", "d"), undefined);
  });

  test("a registration makes its version the latest at once, also an older one again", async () => {
    const store = await open();
    await store.namespaces.create(namespace("n"));
    const { definitions } = store.workflows;
    await definitions.register(definition("d", V1, 1));
    assert.equal((await definitions.latest("n", "d"))?.version, V1);
    await definitions.register(definition("d", V2, 2));
    assert.equal((await definitions.latest("n", "d"))?.version, V2);
    await definitions.register(definition("d", V1, 3));
    assert.equal((await definitions.latest("n", "d"))?.version, V1);
  });

  test("a read made before a change is not remembered past the change", async () => {
    const store = await open();
    await store.namespaces.create(namespace("n"));
    // Made in this order, served in this order: the read sees the namespace, the deletion
    // follows it; the read's answer arrives after the deletion forgot, and must not stay.
    const read = store.namespaces.get("n");
    const deleted = store.namespaces.delete("n");
    assert.equal((await read)?.name, "n");
    assert.equal((await deleted).outcome, "deleted");
    assert.equal(await store.namespaces.get("n"), undefined);
  });

  test("a run started here has no transcribed attempts until an entry is appended", async () => {
    const store = await open();
    const { runs } = store.workflows;
    const start = (runId: string): Promise<void> =>
      runs.commit([
        {
          runId,
          workflowId: `w-${runId}`,
          namespace: "n",
          definitionVersion: V1,
          events: [started(1, `w-${runId}`) as HistoryEvent],
          status: "Running",
        },
      ]);
    await start("r1");
    assert.deepEqual(await store.transcripts.attempts("r1"), []);
    await store.transcripts.append({ run_id: "r1", activity_id: 1, attempt: 1 }, "{}", 2);
    assert.deepEqual(await store.transcripts.attempts("r1"), [{ activity_id: 1, attempt: 1 }]);
    // An entry appended before the run's start commit (a speculative dispatch) still counts.
    await store.transcripts.append({ run_id: "r2", activity_id: 3, attempt: 2 }, "{}", 2);
    await start("r2");
    assert.deepEqual(await store.transcripts.attempts("r2"), [{ activity_id: 3, attempt: 2 }]);
  });

  test("each table is bounded, the oldest entry leaving first", async () => {
    const file = await fresh();
    const db = openDatabase(file);
    migrate(db, file);
    try {
      const memory = new WriterMemory(2);
      const namespaces = memory.namespaces(new SqlNamespaceStore(new SqliteDatabase(db)));
      for (const name of ["a", "b", "c", "d"]) await namespaces.get(name);
      assert.equal(memory.size, 2);
      for (const run of ["r1", "r2", "r3"]) memory.started(run);
      assert.equal(memory.size, 4);
    } finally {
      db.close();
    }
  });
});
