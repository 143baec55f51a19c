// branches.merge and branches.revert against a model: random edits on two branches from a
// common ancestor; the merged state must equal the model's three-way merge and the
// conflicts must be exactly the model's, for every strategy. Real stores on disk.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Store } from "../../../src/store/engine/index.ts";
import { freshStore, rng } from "./fixture.ts";

type Model = Map<string, unknown>;
const C = "m";

/** Every record of a ref (a branch's head by default). */
function listAll(store: Store, ref: string): Model {
  const out: Model = new Map();
  let after: string | undefined;
  for (;;) {
    const page = store.list({ collection: C, branch: "main", version: ref }, { after, limit: 500 });
    for (const row of page.rows) out.set(row.key, row.value);
    if (page.next === null) return out;
    after = page.next;
  }
}

const keyOf = (i: number) => `k${String(i).padStart(5, "0")}`;
const pad = "p".repeat(90);

/** Random commits on a branch: overwrite, delete or add keys; values from a small set. */
function edit(store: Store, branch: string, random: () => number, commits: number, span: number) {
  for (let c = 0; c < commits; c++) {
    const puts: { key: string; value: unknown }[] = [];
    const dels: string[] = [];
    const n = 1 + Math.floor(random() * 12);
    const touched = new Set<string>();
    for (let i = 0; i < n; i++) {
      // Half the edits fall on a hot range, so both sides often touch the same keys.
      const key = keyOf(Math.floor(random() * (random() < 0.5 ? 60 : span)));
      if (touched.has(key)) continue;
      touched.add(key);
      if (random() < 0.25) dels.push(key);
      else puts.push({ key, value: { v: Math.floor(random() * 3), pad } });
    }
    if (puts.length > 0) store.put({ collection: C, branch }, puts, "tester");
    if (dels.length > 0) store.delete({ collection: C, branch }, dels, "tester");
  }
}

interface ModelMerge {
  merged: { ours: Model; theirs: Model };
  conflicts: Map<string, { base?: unknown; ours?: unknown; theirs?: unknown }>;
}

/** The model's three-way merge of plain maps. */
function modelMerge(base: Model, ours: Model, theirs: Model): ModelMerge {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const keys = new Set([...base.keys(), ...ours.keys(), ...theirs.keys()]);
  const mergedOurs: Model = new Map();
  const mergedTheirs: Model = new Map();
  const conflicts: ModelMerge["conflicts"] = new Map();
  const set = (m: Model, k: string, v: unknown) => (v === undefined ? m.delete(k) : m.set(k, v));
  for (const k of keys) {
    const b = base.get(k);
    const o = ours.get(k);
    const t = theirs.get(k);
    let clean: unknown;
    let conflict = false;
    if (same(o, t)) clean = o;
    else if (same(o, b)) clean = t;
    else if (same(t, b)) clean = o;
    else conflict = true;
    if (conflict) {
      conflicts.set(k, {
        ...(b === undefined ? {} : { base: b }),
        ...(o === undefined ? {} : { ours: o }),
        ...(t === undefined ? {} : { theirs: t }),
      });
      set(mergedOurs, k, o);
      set(mergedTheirs, k, t);
    } else {
      set(mergedOurs, k, clean);
      set(mergedTheirs, k, clean);
    }
  }
  return { merged: { ours: mergedOurs, theirs: mergedTheirs }, conflicts };
}

function sorted(m: Model): [string, unknown][] {
  return [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

async function seeded(seed: number, span: number) {
  const { store } = await freshStore({}, 3);
  store.createCollection(C);
  const random = rng(seed);
  const records = Array.from({ length: span }, (_, i) => ({
    key: keyOf(i),
    value: { v: 0, pad },
  }));
  store.put({ collection: C, branch: "main" }, records);
  store.createBranch(C, "agent", { branch: "main" });
  return { store, random };
}

describe("three-way merge against the model", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    test(`seed ${seed}: every strategy gives the model's state and conflicts`, async () => {
      const span = 1500;
      const { store, random } = await seeded(seed, span);
      let conflicts = 0;
      // Two rounds: the second merge's ancestor is the first merge's, not the fork point.
      for (let round = 0; round < 2; round++) {
        edit(store, "main", random, 3 + Math.floor(random() * 4), span);
        edit(store, "agent", random, 3 + Math.floor(random() * 4), span);
        const ours = listAll(store, "main");
        const theirs = listAll(store, "agent");
        const ancestor = store.merge(C, "agent", "main", { dryRun: true });
        assert.equal(ancestor.outcome, "merged");
        assert.equal(ancestor.committed, false);
        const baseModel = listAt(store, ancestor.base!);
        const model = modelMerge(baseModel, ours, theirs);
        assert.equal(ancestor.conflict_count, model.conflicts.size);
        conflicts += model.conflicts.size;
        const got = new Map(ancestor.conflicts.map(({ key, ...rest }) => [key, rest]));
        assert.deepEqual(
          [...got.entries()].sort(),
          [...model.conflicts.entries()].sort(),
          "conflicts are exactly the model's",
        );
        // The dry run committed nothing.
        assert.deepEqual(sorted(listAll(store, "main")), sorted(ours));
        if (model.conflicts.size > 0) {
          assert.throws(
            () => store.merge(C, "agent", "main"),
            (e: { code?: string }) => e.code === "merge_conflict",
          );
          assert.deepEqual(sorted(listAll(store, "main")), sorted(ours), "fail commits nothing");
        }
        // Try `theirs` on a scratch branch, then `ours` for real on main.
        store.createBranch(C, `scratch${round}`, { branch: "main" });
        store.merge(C, "agent", `scratch${round}`, { strategy: "theirs" });
        assert.deepEqual(sorted(listAll(store, `scratch${round}`)), sorted(model.merged.theirs));
        const merged = store.merge(C, "agent", "main", { strategy: "ours", by: "reviewer" });
        assert.equal(merged.outcome, "merged");
        assert.deepEqual(sorted(listAll(store, "main")), sorted(model.merged.ours));
        assert.deepEqual(merged.receipt?.parents, [merged.ours, merged.theirs]);
        const head = store.history(C, "main", undefined, 1).rows[0]!;
        assert.deepEqual(head.parents, [merged.ours, merged.theirs], "history shows the merge");
        assert.equal(head.author, "reviewer");
        assert.match(head.message ?? "", /merge agent into main/);
      }
      assert.ok(conflicts > 0, "the edits met conflicts");
    });
  }
});

/** Every record of the version `version`, wherever it is retained (main or agent). */
function listAt(store: Store, version: number): Model {
  for (const branch of ["main", "agent"]) {
    try {
      return listAll(store, `${branch}@${version}`);
    } catch {
      // Not retained on this branch; try the other.
    }
  }
  throw new Error(`version ${version} is retained on neither branch`);
}
