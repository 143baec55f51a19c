// Optimistic concurrency over a real socket (#34, the door's stale-preview refusal): a commit,
// merge or revert that names the head it expects (`expect_head`, and `expect_from` for the
// merged side) is refused `head_moved` once either side moved, and nothing is written.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { refused } from "../query/fixture.ts";
import { servedStore } from "./fixture.ts";

interface Receipt {
  version: number;
}
interface Merge {
  outcome: string;
  ours: number;
  theirs: number;
  receipt: Receipt | null;
}

describe("expect_head and expect_from over a real socket", async () => {
  const served = await servedStore();
  const client = await served.connect();
  const c = "e";
  await client.call("collections.create", { collection: c });
  await client.call("document.put", { collection: c, key: "a", value: 1 });
  await client.call("branches.create", { collection: c, branch: "agent" });
  const head = async (branch: string) =>
    (
      (await client.call("history.list", { collection: c, branch, limit: 1 })) as {
        rows: Receipt[];
      }
    ).rows[0]!.version;

  test("document.put and document.delete commit only onto the expected head", async () => {
    const seen = await head("agent");
    const put = (await client.call("document.put", {
      collection: c,
      branch: "agent",
      key: "b",
      value: 2,
      expect_head: seen,
    })) as Receipt;
    const stale = await refused(
      client.call("document.put", {
        collection: c,
        branch: "agent",
        key: "b",
        value: 3,
        expect_head: seen,
      }),
      "head_moved",
    );
    assert.match(
      stale.message,
      new RegExp(`agent is at version ${put.version}, not the expected ${seen}`),
    );
    await refused(
      client.call("document.delete", {
        collection: c,
        branch: "agent",
        key: "b",
        expect_head: seen,
      }),
      "head_moved",
    );
    assert.equal(await head("agent"), put.version, "nothing was committed");
    const got = (await client.call("document.get", {
      collection: c,
      branch: "agent",
      key: "b",
    })) as {
      value: unknown;
    };
    assert.equal(got.value, 2);
    await client.call("document.delete", {
      collection: c,
      branch: "agent",
      key: "b",
      expect_head: put.version,
    });
  });

  test("branches.merge is refused when either side moved since the preview", async () => {
    await client.call("document.put", { collection: c, branch: "agent", key: "x", value: 1 });
    const preview = (await client.call("branches.merge", {
      collection: c,
      from: "agent",
      into: "main",
      dry_run: true,
    })) as Merge;
    assert.equal(preview.outcome, "fast_forward");
    const expect = { expect_head: preview.ours, expect_from: preview.theirs };
    // The merged branch moved.
    await client.call("document.put", { collection: c, branch: "agent", key: "y", value: 1 });
    await refused(
      client.call("branches.merge", { collection: c, from: "agent", into: "main", ...expect }),
      "head_moved",
    );
    assert.equal(await head("main"), preview.ours, "main did not move");
    // The merged-into branch moved.
    const again = (await client.call("branches.merge", {
      collection: c,
      from: "agent",
      into: "main",
      dry_run: true,
    })) as Merge;
    await client.call("document.put", { collection: c, key: "z", value: 1 });
    await refused(
      client.call("branches.merge", {
        collection: c,
        from: "agent",
        into: "main",
        expect_head: again.ours,
        expect_from: again.theirs,
      }),
      "head_moved",
    );
    // Fresh expectations merge.
    const fresh = (await client.call("branches.merge", {
      collection: c,
      from: "agent",
      into: "main",
      dry_run: true,
    })) as Merge;
    const merged = (await client.call("branches.merge", {
      collection: c,
      from: "agent",
      into: "main",
      expect_head: fresh.ours,
      expect_from: fresh.theirs,
    })) as Merge;
    assert.equal(merged.outcome, "merged");
    assert.ok(merged.receipt !== null);
  });

  test("branches.revert is refused when the branch moved since its preview", async () => {
    const bad = (await client.call("document.put", {
      collection: c,
      key: "oops",
      value: 1,
    })) as Receipt;
    await client.call("document.put", { collection: c, key: "later", value: 1 });
    await refused(
      client.call("branches.revert", {
        collection: c,
        version: bad.version,
        expect_head: bad.version,
      }),
      "head_moved",
    );
    const reverted = (await client.call("branches.revert", {
      collection: c,
      version: bad.version,
      expect_head: await head("main"),
    })) as Merge;
    assert.equal(reverted.outcome, "reverted");
  });
});
