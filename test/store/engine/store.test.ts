import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { freshStore } from "./fixture.ts";

const main = { collection: "notes", branch: "main" };

function refusal(code: string) {
  return (error: unknown) => error instanceof SkeinError && error.code === code;
}

describe("store engine", async () => {
  const { store, reopen } = await freshStore({ keptVersions: 3 });
  store.createCollection("notes");

  test("put, get, delete, list over shards in key order", () => {
    const receipt = store.put(main, [
      { key: "b", value: { n: 2 } },
      { key: "a", value: [1, "x"] },
      { key: "c", value: null },
    ]);
    assert.equal(typeof receipt.version, "number");
    assert.equal(receipt.author, "local");
    assert.deepEqual(store.get(main, "a"), {
      found: true,
      value: [1, "x"],
      version: receipt.version,
    });
    assert.equal(store.get(main, "c").found, true);
    const page = store.list(main, { limit: 2 });
    assert.deepEqual(
      page.rows.map((r) => r.key),
      ["a", "b"],
    );
    assert.equal(page.next, "b");
    assert.deepEqual(
      store.list(main, { after: "b" }).rows.map((r) => r.key),
      ["c"],
    );
    store.delete(main, ["c"]);
    assert.equal(store.get(main, "c").found, false);
  });

  test("reading an old version", () => {
    const first = store.put(main, [{ key: "k", value: 1 }]);
    store.put(main, [{ key: "k", value: 2 }]);
    assert.equal(store.get({ ...main, version: first.version }, "k").value, 1);
    assert.equal(store.get(main, "k").value, 2);
  });

  test("branch isolation: a write on a branch is invisible on main", () => {
    store.createBranch("notes", "draft");
    store.put({ collection: "notes", branch: "draft" }, [{ key: "only-draft", value: true }]);
    assert.equal(store.get(main, "only-draft").found, false);
    assert.equal(store.get({ collection: "notes", branch: "draft" }, "only-draft").found, true);
    assert.deepEqual(
      store.listBranches("notes").rows.map((b) => b.name),
      ["draft", "main"],
    );
  });

  test("a branch from a past version starts there", () => {
    const old = store.put(main, [{ key: "p", value: "old" }]);
    store.put(main, [{ key: "p", value: "new" }]);
    const info = store.createBranch("notes", "past", { branch: "main", version: old.version });
    assert.equal(info.head.version, old.version);
    assert.equal(store.get({ collection: "notes", branch: "past" }, "p").value, "old");
  });

  test("kept_versions window moves older heads to history rows, all still readable", () => {
    const receipts = [];
    for (let i = 0; i < 8; i++) receipts.push(store.put(main, [{ key: "w", value: i }]));
    const record = store.ctx.db.branches.get(["notes", "main"])!;
    assert.equal(record.kept.length, 3);
    assert.equal(record.kept[0]!.version, receipts[6]!.version);
    assert.equal(store.get({ ...main, version: receipts[0]!.version }, "w").value, 0);
    const history = store.history("notes", "main", undefined, 5);
    assert.deepEqual(
      history.rows.map((r) => r.version),
      receipts
        .slice(3)
        .reverse()
        .map((r) => r.version),
    );
    const rest = store.history("notes", "main", history.next!, 100);
    assert.equal(rest.rows[0]!.version, receipts[2]!.version);
  });

  test("refusals carry the catalogue's codes", () => {
    assert.throws(() => store.createCollection("notes"), refusal("collection_exists"));
    assert.throws(
      () => store.get({ collection: "nope", branch: "main" }, "a"),
      refusal("collection_not_found"),
    );
    assert.throws(
      () => store.get({ collection: "notes", branch: "nope" }, "a"),
      refusal("branch_not_found"),
    );
    assert.throws(() => store.get({ ...main, version: 999999 }, "a"), refusal("version_not_found"));
    assert.throws(() => store.createBranch("notes", "draft"), refusal("branch_exists"));
    assert.throws(() => store.deleteBranch("notes", "main"), refusal("branch_protected"));
    assert.throws(() => store.list(main, { limit: 501 }), refusal("page_limit"));
  });

  test("deleting a branch and a collection", () => {
    store.deleteBranch("notes", "draft");
    assert.throws(
      () => store.get({ collection: "notes", branch: "draft" }, "a"),
      refusal("branch_not_found"),
    );
    store.createCollection("scratch");
    store.deleteCollection("scratch");
    assert.deepEqual(
      store.listCollections().rows.map((c) => c.name),
      ["notes"],
    );
  });

  test("a reopened store keeps every commit and the version counter", async () => {
    const last = store.put(main, [{ key: "durable", value: 42 }]);
    const again = await reopen();
    assert.equal(again.get(main, "durable").value, 42);
    const next = again.put(main, [{ key: "after", value: 1 }]);
    assert.ok(next.version > last.version);
  });
});

describe("paging collections and branches", async () => {
  const { store } = await freshStore();
  for (const name of ["a", "b", "c", "d", "e"]) store.createCollection(name);
  for (const name of ["x", "y", "z"]) store.createBranch("a", name);

  test("pages of 2 walk every collection once, with a cursor to continue", () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = store.listCollections(after, 2);
      seen.push(...page.rows.map((r) => r.name));
      if (page.next === null) break;
      after = page.next;
    }
    assert.deepEqual(seen, ["a", "b", "c", "d", "e"]);
  });

  test("pages of 3 walk every branch once", () => {
    const first = store.listBranches("a", undefined, 3);
    assert.deepEqual(
      first.rows.map((b) => b.name),
      ["main", "x", "y"],
    );
    const second = store.listBranches("a", first.next!, 3);
    assert.deepEqual(
      second.rows.map((b) => b.name),
      ["z"],
    );
    assert.equal(second.next, null);
  });
});

describe("lowering kept_versions", async () => {
  const { store: first, reopen } = await freshStore({ keptVersions: 6 });
  first.createCollection("c");
  const where = { collection: "c", branch: "main" };
  const versions: number[] = [];
  for (let i = 0; i < 10; i++) versions.push(first.put(where, [{ key: "k", value: i }]).version);

  test("moves heads out of the window at the next commit and deletes no history row", async () => {
    const store = await reopen({ keptVersions: 2 });
    versions.push(store.put(where, [{ key: "k", value: 10 }]).version);
    const record = store.ctx.db.branches.get(["c", "main"])!;
    assert.equal(record.kept.length, 2);
    for (const [i, version] of versions.entries()) {
      assert.equal(store.get({ ...where, version }, "k").value, i);
    }
    const all = store.history("c", "main", undefined, 100).rows.map((r) => r.version);
    assert.deepEqual(all.slice(0, versions.length), [...versions].reverse());
  });
});

describe("changes between branches", async () => {
  const { store } = await freshStore();
  store.createCollection("d");
  const main = { collection: "d", branch: "main" };
  const base = store.put(main, [
    { key: "same", value: 1 },
    { key: "edited", value: 1 },
    { key: "dropped", value: 1 },
  ]);
  store.createBranch("d", "dev");
  const dev = { collection: "d", branch: "dev" };
  store.put(dev, [
    { key: "edited", value: 2 },
    { key: "new", value: 3 },
  ]);
  store.delete(dev, ["dropped"]);

  test("from main's version to dev's head lists dev's work, in key order per shard", () => {
    const page = store.changes({
      collection: "d",
      branch: "dev",
      fromBranch: "main",
      from: base.version,
      to: undefined,
      cursor: undefined,
    });
    const rows = page.changes.map((c) => [c.key, c.type, c.from, c.to]).sort();
    assert.deepEqual(rows, [
      ["dropped", "removed", 1, undefined],
      ["edited", "modified", 1, 2],
      ["new", "added", undefined, 3],
    ]);
    assert.equal(page.cursor, null);
  });

  test("main is untouched by dev's work", () => {
    assert.equal(store.get(main, "edited").value, 1);
    assert.equal(store.get(main, "new").found, false);
  });
});

describe("one commit with repeated keys", async () => {
  const { store } = await freshStore();
  store.createCollection("r");
  const where = { collection: "r", branch: "main" };

  test("the last write of a key in a batch wins", () => {
    store.put(where, [
      { key: "a", value: 1 },
      { key: "b", value: 1 },
      { key: "a", value: 2 },
      { key: "a", value: 3 },
    ]);
    assert.equal(store.get(where, "a").value, 3);
    assert.equal(store.list(where).rows.length, 2);
  });
});
