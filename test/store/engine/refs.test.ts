// Refs, tags, fast-forward, revert and the ancestor across retention, on real stores.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import type { Store } from "../../../src/store/engine/index.ts";
import { freshStore } from "./fixture.ts";

const C = "c";
const main = { collection: C, branch: "main" };
const agent = { collection: C, branch: "agent" };

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof SkeinError) return error.code;
    throw error;
  }
  return "no refusal";
}

const value = (store: Store, ref: number | string | undefined, key: string) =>
  store.get({ ...main, version: ref }, key).value;

describe("refs wherever a version is taken", () => {
  test("a number, a branch, BRANCH@VERSION and a tag name the same versions", async () => {
    const { store } = await freshStore();
    store.createCollection(C);
    const v1 = store.put(main, [{ key: "a", value: 1 }]).version;
    store.createBranch(C, "agent");
    const v2 = store.put(agent, [{ key: "a", value: 2 }]).version;
    store.createTag(C, "reviewed", { branch: "agent" }, { author: "r", message: "ok" });
    store.put(agent, [{ key: "a", value: 3 }]);
    assert.equal(value(store, v1, "a"), 1, "a number reads the request's branch");
    assert.equal(value(store, "agent", "a"), 3, "a branch name reads its head");
    assert.equal(value(store, `agent@${v2}`, "a"), 2);
    assert.equal(value(store, "reviewed", "a"), 2, "a tag");
    assert.equal(store.get({ ...main, version: "main" }, "a").version, v1);
    assert.equal(
      code(() => value(store, "nothing", "a")),
      "ref_not_found",
    );
    assert.equal(
      code(() => value(store, "agent@1", "a")),
      "version_not_found",
    );
    assert.equal(
      code(() => value(store, "agent@x", "a")),
      "ref_not_found",
    );
    // document.list, branches.create, changes.list (across branches) and scans.
    assert.deepEqual(store.list({ ...main, version: "reviewed" }).rows, [{ key: "a", value: 2 }]);
    store.createBranch(C, "from-tag", { branch: "main", version: "reviewed" });
    assert.equal(store.get({ collection: C, branch: "from-tag" }, "a").value, 2);
    const diff = store.changes({
      collection: C,
      branch: "main",
      fromBranch: undefined,
      from: "main",
      to: "agent",
      cursor: undefined,
    });
    assert.deepEqual(diff.changes, [{ key: "a", type: "modified", from: 1, to: 3 }]);
    const scan = store.scanRecords({ ...main, version: "reviewed" });
    assert.equal(scan.version, v2);
    scan.close();
  });

  test("tags: tag_exists, list with author and message, delete; a branch name wins", async () => {
    const { store } = await freshStore();
    store.createCollection(C);
    store.put(main, [{ key: "a", value: 1 }]);
    const tag = store.createTag(C, "t1", {}, { author: "me", message: "first" });
    assert.equal(tag.author, "me");
    assert.equal(tag.message, "first");
    assert.equal(
      code(() => store.createTag(C, "t1")),
      "tag_exists",
    );
    store.createBranch(C, "agent");
    store.put(agent, [{ key: "a", value: 2 }]);
    store.createTag(C, "agent", { branch: "main" });
    assert.equal(value(store, "agent", "a"), 2, "the branch, not the tag of that name");
    assert.deepEqual(
      store.listTags(C).rows.map((t) => [t.name, t.branch]),
      [
        ["agent", "main"],
        ["t1", "main"],
      ],
    );
    store.deleteTag(C, "t1");
    assert.equal(
      code(() => value(store, "t1", "a")),
      "ref_not_found",
    );
    assert.equal(
      code(() => store.deleteTag(C, "t1")),
      "ref_not_found",
    );
  });

  test("a tag keeps its version through retention; deleting it lets the nodes go", async () => {
    const { store } = await freshStore({
      keptVersions: 1,
      retention: { releaseMaxRows: 1024, releaseBatch: 1_000_000, keep: { versions: 1, days: 0 } },
    });
    store.createCollection(C);
    const rows = (round: number) =>
      Array.from({ length: 300 }, (_, i) => ({
        key: `k${i}`,
        value: { round, p: "x".repeat(80) },
      }));
    const tagged = store.put(main, rows(0)).version;
    store.createTag(C, "keep-me");
    for (let round = 1; round <= 5; round++) store.put(main, rows(round));
    const released = store.release(Date.now() + 60_000);
    assert.ok(released.released > 0, "history rows were released");
    assert.equal(
      code(() => value(store, tagged, "k0")),
      "version_not_found",
    );
    assert.deepEqual(value(store, "keep-me", "k299"), { round: 0, p: "x".repeat(80) });
    const before = store.stats().node_entries;
    store.deleteTag(C, "keep-me");
    assert.ok(store.stats().node_entries < before, "the tag's nodes are freed with it");
  });
});

describe("merge outcomes", () => {
  test("fast-forward, up to date, and a dry run that commits nothing", async () => {
    const { store } = await freshStore();
    store.createCollection(C);
    store.put(main, [{ key: "a", value: 1 }]);
    store.createBranch(C, "agent");
    const v = store.put(agent, [{ key: "b", value: 2 }], { author: "bot", message: "add b" });
    assert.equal(v.message, "add b");
    const head = store.history(C, "main", undefined, 1).rows[0]!.version;
    const dry = store.merge(C, "agent", "main", { dryRun: true });
    assert.equal(dry.outcome, "fast_forward");
    assert.equal(dry.committed, false);
    assert.equal(store.history(C, "main", undefined, 1).rows[0]!.version, head);
    const ff = store.merge(C, "agent", "main");
    assert.equal(ff.outcome, "fast_forward");
    assert.equal(ff.receipt?.version, v.version);
    assert.equal(store.get(main, "b").value, 2);
    assert.equal(store.history(C, "main", undefined, 1).rows[0]!.message, "add b");
    assert.equal(store.merge(C, "agent", "main").outcome, "up_to_date");
    assert.equal(store.merge(C, "main", "agent").outcome, "up_to_date");
  });

  test("a merged branch merges again from the last merge, not the fork point", async () => {
    const { store } = await freshStore();
    store.createCollection(C);
    store.put(main, [{ key: "a", value: 1 }]);
    store.createBranch(C, "agent");
    store.put(agent, [{ key: "a", value: 2 }]);
    store.put(main, [{ key: "m", value: 1 }]);
    assert.equal(store.merge(C, "agent", "main").outcome, "merged");
    // Main changes `a` after the merge; agent does not touch it again: no conflict.
    store.put(main, [{ key: "a", value: 5 }]);
    store.put(agent, [{ key: "z", value: 1 }]);
    const second = store.merge(C, "agent", "main");
    assert.equal(second.conflict_count, 0);
    assert.equal(store.get(main, "a").value, 5);
    assert.equal(store.get(main, "z").value, 1);
  });

  test("an ancestor released by retention: kept by the fork point, or merge_base_released", async () => {
    const { store } = await freshStore({
      keptVersions: 1,
      retention: { releaseMaxRows: 1024, releaseBatch: 1_000_000, keep: { versions: 1, days: 0 } },
    });
    store.createCollection(C);
    store.put(main, [{ key: "a", value: 0 }]);
    store.createBranch(C, "agent");
    for (let i = 1; i <= 4; i++) {
      store.put(main, [{ key: "m", value: i }]);
      store.put(agent, [{ key: "g", value: i }]);
    }
    store.release(Date.now() + 60_000);
    // Main's history no longer holds the fork point; agent's record does, readable as a ref.
    const fork = store.merge(C, "agent", "main", { dryRun: true }).base!;
    assert.equal(
      code(() => value(store, `main@${fork}`, "a")),
      "version_not_found",
    );
    assert.equal(store.get({ ...main, version: `agent@${fork}` }, "a").value, 0);
    assert.equal(store.merge(C, "agent", "main").outcome, "merged");
    // Y forks from X, X from main; X goes, and retention releases main's old heads: the
    // ancestor of Y and main (X's fork point) is retained nowhere.
    const x = { collection: C, branch: "x" };
    store.createBranch(C, "x");
    store.put(x, [{ key: "x", value: 1 }]);
    store.createBranch(C, "y", { branch: "x" });
    store.put({ collection: C, branch: "y" }, [{ key: "y", value: 1 }]);
    for (let i = 5; i <= 7; i++) store.put(main, [{ key: "m", value: i }]);
    store.deleteBranch(C, "x");
    store.release(Date.now() + 60_000);
    assert.equal(
      code(() => store.merge(C, "y", "main")),
      "merge_base_released",
    );
  });
});

describe("the ancestor search is bounded", () => {
  test("beyond changes_node_budget versions: merge_ancestor_budget, nothing written", async () => {
    const { store, reopen } = await freshStore({ changesNodeBudget: 8 });
    store.createCollection(C);
    store.put(main, [{ key: "a", value: 0 }]);
    store.createBranch(C, "agent");
    const sides = (from: number, to: number) => {
      for (let i = from; i <= to; i++) {
        store.put(main, [{ key: "m", value: i }]);
        store.put(agent, [{ key: "g", value: i }]);
      }
    };
    // Six versions since the fork: within a budget of eight.
    sides(1, 3);
    assert.equal(store.merge(C, "agent", "main").outcome, "merged");
    // Eighteen since that merge (the merge commit is the next ancestor): over it.
    sides(4, 12);
    for (const dryRun of [false, true]) {
      assert.equal(
        code(() => store.merge(C, "agent", "main", { dryRun })),
        "merge_ancestor_budget",
      );
    }
    assert.deepEqual(
      [store.get(main, "m").value, store.get(main, "g").value],
      [12, 3],
      "nothing was written",
    );
    assert.throws(
      () => store.merge(C, "agent", "main"),
      /more than changes_node_budget \(8\) versions back; merge the branches more often/,
    );
    // The same merge with the budget raised, as the refusal says.
    const raised = await reopen({ changesNodeBudget: 64 });
    assert.equal(raised.merge(C, "agent", "main").outcome, "merged");
    assert.equal(raised.get(main, "g").value, 12);
  });
});

describe("revert", () => {
  test("commits the inverse of one version; a key changed since is a conflict", async () => {
    const { store } = await freshStore();
    store.createCollection(C);
    store.put(main, [
      { key: "a", value: 1 },
      { key: "b", value: 1 },
    ]);
    const bad = store.put(main, [
      { key: "a", value: 2 },
      { key: "c", value: 1 },
    ]).version;
    store.delete(main, ["b"]);
    const reverted = store.revert(C, "main", bad, { by: "fixer" });
    assert.equal(reverted.outcome, "reverted");
    assert.deepEqual(store.list(main).rows, [{ key: "a", value: 1 }]);
    assert.match(reverted.receipt?.message ?? "", new RegExp(`revert version ${bad}`));
    // Reverting again: nothing left to undo.
    const bad2 = store.put(main, [{ key: "a", value: 7 }]).version;
    store.put(main, [{ key: "a", value: 8 }]);
    assert.equal(
      code(() => store.revert(C, "main", bad2)),
      "merge_conflict",
    );
    const dry = store.revert(C, "main", bad2, { dryRun: true });
    assert.deepEqual(dry.conflicts, [{ key: "a", base: 7, ours: 8, theirs: 1 }]);
    store.revert(C, "main", bad2, { strategy: "theirs" });
    assert.equal(store.get(main, "a").value, 1);
  });
});

describe("merge bounds", () => {
  test("at most changes_max_page conflicts are values; the count is exact", async () => {
    const { store } = await freshStore({ changesMaxPage: 3 });
    store.createCollection(C);
    const keys = ["a", "b", "c", "d", "e"];
    store.put(
      main,
      keys.map((key) => ({ key, value: 0 })),
    );
    store.createBranch(C, "agent");
    store.put(
      main,
      keys.map((key) => ({ key, value: 1 })),
    );
    store.put(
      agent,
      keys.map((key) => ({ key, value: 2 })),
    );
    const dry = store.merge(C, "agent", "main", { dryRun: true });
    assert.equal(dry.conflict_count, 5);
    assert.equal(dry.conflicts.length, 3);
  });

  test("each side's diff is held to changes_node_budget", async () => {
    const { store } = await freshStore({ changesNodeBudget: 4 });
    store.createCollection(C);
    const records = (tag: string) =>
      Array.from({ length: 4000 }, (_, i) => ({ key: `k${i}`, value: { tag, p: "x".repeat(60) } }));
    store.put(main, records("base"));
    store.createBranch(C, "agent");
    store.put(agent, records("theirs"));
    store.put(main, [{ key: "m", value: 1 }]);
    assert.equal(
      code(() => store.merge(C, "agent", "main", { dryRun: true })),
      "changes_node_budget",
    );
  });
});
