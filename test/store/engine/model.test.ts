import assert from "node:assert/strict";
import { test } from "node:test";
import type { Store } from "../../../src/store/engine/index.ts";
import { freshStore, rng } from "./fixture.ts";

type Model = Map<string, unknown>;

function listAll(store: Store, branch: string, version?: number): Model {
  const out: Model = new Map();
  let after: string | undefined;
  for (;;) {
    const page = store.list({ collection: "m", branch, version }, { after, limit: 37 });
    for (const row of page.rows) out.set(row.key, row.value);
    if (page.next === null) return out;
    after = page.next;
  }
}

function changesAll(store: Store, fromBranch: string, from: number, branch: string, to: number) {
  const out = new Map<string, [unknown, unknown]>();
  let cursor: string | undefined;
  for (;;) {
    const page = store.changes({
      collection: "m",
      branch,
      fromBranch,
      from,
      to,
      limit: 13,
      cursor,
    });
    for (const c of page.changes) out.set(c.key, [c.from, c.to]);
    if (page.cursor === null) return out;
    cursor = page.cursor;
  }
}

function modelDiff(a: Model, b: Model) {
  const out = new Map<string, [unknown, unknown]>();
  for (const [k, v] of a)
    if (!b.has(k) || JSON.stringify(b.get(k)) !== JSON.stringify(v)) out.set(k, [v, b.get(k)]);
  for (const [k, v] of b) if (!a.has(k)) out.set(k, [undefined, v]);
  return out;
}

test("random writes on two branches agree with a model: reads, old versions, paged diffs", async () => {
  const { store } = await freshStore({ keptVersions: 3, changesScanRecords: 29 });
  store.createCollection("m");
  store.createBranch("m", "dev");
  const random = rng(42);
  const models: Record<string, Model> = { main: new Map(), dev: new Map() };
  const snapshots: { branch: string; version: number; model: Model }[] = [];
  for (let step = 0; step < 60; step++) {
    const branch = random() < 0.5 ? "main" : "dev";
    const model = models[branch]!;
    const where = { collection: "m", branch };
    const count = 1 + Math.floor(random() * 40);
    const records = [];
    const deletes = [];
    for (let i = 0; i < count; i++) {
      const key = `key-${Math.floor(random() * 300)}`;
      if (random() < 0.3) deletes.push(key);
      else records.push({ key, value: { step, i, text: "t".repeat(Math.floor(random() * 300)) } });
    }
    let version: number;
    if (records.length > 0) {
      version = store.put(where, records).version;
      for (const r of records) model.set(r.key, r.value);
    }
    if (deletes.length > 0 || records.length === 0) {
      version = store.delete(where, deletes.length > 0 ? deletes : ["none"]).version;
      for (const k of deletes) model.delete(k);
    }
    snapshots.push({ branch, version: version!, model: new Map(model) });
    assert.deepEqual(listAll(store, branch), model, `step ${step}`);
  }
  // Every retained version still reads as it was.
  for (const snap of snapshots) {
    assert.deepEqual(
      listAll(store, snap.branch, snap.version),
      snap.model,
      `version ${snap.version}`,
    );
  }
  // Diffs between random pairs of versions, across branches, equal the model's.
  for (let i = 0; i < 20; i++) {
    const a = snapshots[Math.floor(random() * snapshots.length)]!;
    const b = snapshots[Math.floor(random() * snapshots.length)]!;
    const got = changesAll(store, a.branch, a.version, b.branch, b.version);
    const want = modelDiff(a.model, b.model);
    assert.deepEqual(
      new Map([...got].sort()),
      new Map([...want].sort()),
      `${a.version} → ${b.version}`,
    );
  }
});
