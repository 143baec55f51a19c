// A merge's or revert's dry run is a read (issue #34, item 4): a reviewer who may read both
// branches sees the preview and its conflicts, and learns from `allowed` whether the act
// itself would be refused, which it then is. A caller who may not read a branch involved
// gets no preview at all. Real skein-idp, real `skein-store serve`, over the socket.

import assert from "node:assert/strict";
import { test } from "node:test";
import { agent, DATABASE, idpStore, refusal, runIdp } from "./support.ts";

interface Preview {
  outcome: string;
  conflict_count: number;
  conflicts: { key: string }[];
  allowed?: boolean;
}

const idp = await runIdp();
const served = await idpStore(idp, { placement: true });
const admin = await agent(idp, "admin-previews", [["admin", `db/${DATABASE}`]]);
const owner = await served.connect(admin.pass);
await owner.call("collections.create", { collection: "docs" });
await owner.put("docs", [
  { key: "a", value: 1 },
  { key: "b", value: 1 },
]);
await owner.call("branches.create", { collection: "docs", branch: "agent" });
await owner.put("docs", [{ key: "a", value: "agent" }], { branch: "agent" });
await owner.put("docs", [{ key: "a", value: "main" }]);
const revertable = (await owner.put("docs", [{ key: "b", value: 2 }])).version;

const reviewer = await served.connect(
  (await agent(idp, "reviewer", [["read", `db/${DATABASE}`]])).pass,
);
const mainReader = await served.connect(
  (await agent(idp, "main-reader", [["read", `db/${DATABASE}/c/docs/b/main`]])).pass,
);
const mainWriter = await served.connect(
  (
    await agent(idp, "main-writer", [
      ["write", `db/${DATABASE}/c/docs/b/main`],
      ["read", `db/${DATABASE}/c/docs/b/agent`],
    ])
  ).pass,
);
const merge = { collection: "docs", from: "agent", into: "main" };
const revert = { collection: "docs", branch: "main", version: revertable };

test("a reader of both branches previews the merge, told it may not make it", async () => {
  const preview = (await reviewer.call("branches.merge", { ...merge, dry_run: true })) as Preview;
  assert.equal(preview.outcome, "merged");
  assert.deepEqual(
    preview.conflicts.map((c) => c.key),
    ["a"],
  );
  assert.equal(preview.allowed, false);
  const error = await refusal(reviewer.call("branches.merge", { ...merge, strategy: "theirs" }));
  assert.equal(error.code, "permission_denied");
  assert.equal((await owner.get("docs", "a")).value, "main");
});

test("a writer of the target is told the merge and the revert are allowed", async () => {
  const preview = (await mainWriter.call("branches.merge", {
    ...merge,
    dry_run: true,
  })) as Preview;
  assert.equal(preview.allowed, true);
  assert.equal(preview.conflict_count, 1);
  const reverting = (await mainWriter.call("branches.revert", {
    ...revert,
    dry_run: true,
  })) as Preview;
  assert.equal(reverting.allowed, true);
});

test("a reader of one branch only gets no preview of a merge from the other", async () => {
  const error = await refusal(mainReader.call("branches.merge", { ...merge, dry_run: true }));
  assert.equal(error.code, "permission_denied");
  assert.doesNotMatch(error.message, /agent/);
});

test("a revert's dry run is a read of its branch, with the revert's own decision", async () => {
  for (const client of [reviewer, mainReader]) {
    const preview = (await client.call("branches.revert", { ...revert, dry_run: true })) as Preview;
    assert.equal(preview.outcome, "reverted");
    assert.equal(preview.allowed, false);
    const error = await refusal(client.call("branches.revert", revert));
    assert.equal(error.code, "permission_denied");
  }
  assert.equal((await owner.get("docs", "b")).value, 2);
});

test("a dry run with an expected head that moved is refused as before", async () => {
  const error = await refusal(
    reviewer.call("branches.merge", { ...merge, dry_run: true, expect_head: 1 }),
  );
  assert.equal(error.code, "head_moved");
});

test("the writer makes the merge it previewed, on the heads the preview answered", async () => {
  const preview = (await mainWriter.call("branches.merge", {
    ...merge,
    dry_run: true,
  })) as Preview & {
    ours: number;
    theirs: number;
  };
  const made = (await mainWriter.call("branches.merge", {
    ...merge,
    strategy: "theirs",
    expect_head: preview.ours,
    expect_from: preview.theirs,
  })) as { outcome: string; allowed?: boolean };
  assert.equal(made.outcome, "merged");
  assert.equal(made.allowed, undefined, "only a dry run answers allowed");
  assert.equal((await owner.get("docs", "a")).value, "agent");
});
