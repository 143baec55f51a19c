// The versioning verbs over a real socket: refs in every verb that takes a version, commit
// messages in receipts and history, tags, merge and revert, and their refusals.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { refused, servedQueries } from "../query/fixture.ts";
import { servedStore } from "./fixture.ts";

interface Receipt {
  version: number;
  author: string;
  message?: string;
  parents?: number[];
}

describe("versioning verbs over a real socket", async () => {
  const served = await servedStore();
  const client = await served.connect();
  const c = "v";
  await client.call("collections.create", { collection: c, message: "start" });
  const v1 = (await client.call("document.put", {
    collection: c,
    key: "a",
    value: 1,
    message: "first a",
  })) as Receipt;
  await client.call("branches.create", { collection: c, branch: "agent", from_version: "main" });
  const v2 = (await client.call("document.put", {
    collection: c,
    branch: "agent",
    records: [
      { key: "a", value: 2 },
      { key: "b", value: 2 },
    ],
    author: "agent-7",
    message: "agent work",
  })) as Receipt;

  test("message and author are kept in the receipt and in history.list", async () => {
    assert.equal(v1.message, "first a");
    assert.equal(v1.author, "tester", "the default author is hello's client");
    assert.equal(v2.author, "agent-7");
    const history = (await client.call("history.list", { collection: c, branch: "agent" })) as {
      rows: Receipt[];
    };
    assert.deepEqual(
      history.rows.map((r) => r.message),
      ["agent work", "first a"],
      "a branch lists the heads it had, from the version it was created at",
    );
    const main = (await client.call("history.list", { collection: c })) as { rows: Receipt[] };
    assert.equal(main.rows.at(-1)!.message, "start", "collections.create takes a message");
    const deleted = (await client.call("document.delete", {
      collection: c,
      branch: "agent",
      key: "zz",
      message: "tidy",
    })) as Receipt;
    assert.equal(deleted.message, "tidy");
    const appended = (await client.call("document.append_prune", {
      collection: c,
      branch: "agent",
      key: "log",
      records: [1],
      keep: 5,
      message: "remember",
    })) as { receipt: Receipt };
    assert.equal(appended.receipt.message, "remember");
  });

  test("refs in document.get, document.list, branches.create, changes.list, tags.create", async () => {
    const get = (version: unknown) =>
      client.call("document.get", { collection: c, key: "a", version }) as Promise<{
        value: unknown;
      }>;
    assert.equal((await get(v1.version)).value, 1);
    assert.equal((await get("agent")).value, 2);
    assert.equal((await get(`agent@${v2.version}`)).value, 2);
    await client.call("tags.create", {
      collection: c,
      tag: "v-one",
      version: v1.version,
      message: "the first",
    });
    assert.equal((await get("v-one")).value, 1);
    const list = (await client.call("document.list", {
      collection: c,
      version: `agent@${v2.version}`,
    })) as { rows: { key: string }[]; version: number };
    assert.deepEqual(
      list.rows.map((r) => r.key),
      ["a", "b"],
    );
    assert.equal(list.version, v2.version);
    await client.call("branches.create", { collection: c, branch: "t", from_version: "v-one" });
    assert.equal(
      (
        (await client.call("document.get", { collection: c, branch: "t", key: "a" })) as {
          value: unknown;
        }
      ).value,
      1,
    );
    const diff = (await client.call("changes.list", {
      collection: c,
      from: "main",
      to: `agent@${v2.version}`,
    })) as { changes: { key: string; type: string }[]; from: number; to: number };
    assert.deepEqual(diff.changes.map((x) => [x.key, x.type]).sort(), [
      ["a", "modified"],
      ["b", "added"],
    ]);
    assert.equal(diff.to, v2.version);
    const tags = (await client.call("tags.list", { collection: c })) as {
      rows: { name: string; message?: string; version: Receipt }[];
    };
    assert.deepEqual(
      tags.rows.map((t) => [t.name, t.version.version, t.message]),
      [["v-one", v1.version, "the first"]],
    );
  });

  test("refusals: ref_not_found, version_not_found, tag_exists, invalid_request", async () => {
    await refused(
      client.call("document.get", { collection: c, key: "a", version: "nope" }),
      "ref_not_found",
    );
    await refused(
      client.call("document.get", { collection: c, key: "a", version: "agent@999999" }),
      "version_not_found",
    );
    await refused(client.call("changes.list", { collection: c, from: "x@y" }), "invalid_request");
    await refused(client.call("tags.create", { collection: c, tag: "v-one" }), "tag_exists");
    await refused(client.call("tags.delete", { collection: c, tag: "nope" }), "ref_not_found");
    await refused(
      client.call("branches.merge", {
        collection: c,
        from: "agent",
        into: "main",
        strategy: "both",
      }),
      "invalid_request",
    );
    await refused(
      client.call("document.put", { collection: c, key: "k", value: 1, message: "" }),
      "invalid_request",
    );
  });

  test("branches.merge: conflict refused, dry run previews, ours commits with two parents", async () => {
    await client.call("document.put", { collection: c, key: "a", value: 10 });
    await refused(
      client.call("branches.merge", { collection: c, from: "agent", into: "main" }),
      "merge_conflict",
    );
    const dry = (await client.call("branches.merge", {
      collection: c,
      from: "agent",
      into: "main",
      dry_run: true,
    })) as { conflicts: unknown[]; committed: boolean; conflict_count: number };
    assert.equal(dry.committed, false);
    assert.deepEqual(dry.conflicts, [{ key: "a", base: 1, ours: 10, theirs: 2 }]);
    const merged = (await client.call("branches.merge", {
      collection: c,
      from: "agent",
      into: "main",
      strategy: "ours",
      message: "land agent-7",
    })) as { receipt: Receipt; ours: number; theirs: number };
    assert.deepEqual(merged.receipt.parents, [merged.ours, merged.theirs]);
    assert.equal(merged.receipt.message, "land agent-7");
    const head = (await client.call("history.list", { collection: c, limit: 1 })) as {
      rows: Receipt[];
    };
    assert.deepEqual(head.rows[0]!.parents, [merged.ours, merged.theirs]);
    const b = (await client.call("document.get", { collection: c, key: "b" })) as {
      value: unknown;
    };
    assert.equal(b.value, 2);
  });

  test("branches.revert takes a ref and commits the inverse", async () => {
    const bad = (await client.call("document.put", {
      collection: c,
      key: "oops",
      value: true,
    })) as Receipt;
    await client.call("tags.create", { collection: c, tag: "oops", version: bad.version });
    const reverted = (await client.call("branches.revert", {
      collection: c,
      version: "oops",
    })) as { outcome: string; receipt: Receipt };
    assert.equal(reverted.outcome, "reverted");
    const got = (await client.call("document.get", { collection: c, key: "oops" })) as {
      found: boolean;
    };
    assert.equal(got.found, false);
  });
});

test("query.run takes a ref", async () => {
  const { client } = await servedQueries();
  await client.call("collections.create", { collection: "q" });
  await client.call("document.put", { collection: "q", key: "a", value: 1 });
  await client.call("tags.create", { collection: "q", tag: "one" });
  await client.call("document.put", { collection: "q", key: "a", value: 2 });
  const page = (await client.call("query.run", {
    collection: "q",
    version: "one",
    code: "(r) => r.value",
  })) as { rows: { output: unknown }[] };
  assert.deepEqual(
    page.rows.map((r) => r.output),
    [1],
  );
});

test("history.list takes a ref as before: a branch, BRANCH@VERSION or a tag", async () => {
  const served = await servedStore();
  const client = await served.connect();
  await client.call("collections.create", { collection: "h", message: "start" });
  const put = async (message: string) =>
    (await client.call("document.put", {
      collection: "h",
      key: "k",
      value: message,
      message,
    })) as Receipt;
  await put("a");
  await client.call("tags.create", { collection: "h", tag: "at-a" });
  const b = await put("b");
  await client.call("branches.create", { collection: "h", branch: "side" });
  await put("c");
  const page = async (before: number | string, limit?: number) =>
    (await client.call("history.list", {
      collection: "h",
      before,
      ...(limit === undefined ? {} : { limit }),
    })) as {
      rows: Receipt[];
      next: number | null;
    };
  const messages = async (before: number | string) =>
    (await page(before)).rows.map((r) => r.message);
  assert.deepEqual(await messages("main"), ["b", "a", "start"], "older than main's head");
  assert.deepEqual(await messages(`main@${b.version}`), ["a", "start"]);
  assert.deepEqual(await messages("at-a"), ["start"], "a tag");
  // Another branch's head bounds this branch's history (side was made at b).
  assert.deepEqual(await messages("side"), ["a", "start"]);
  assert.deepEqual(await messages(b.version), ["a", "start"], "a number, as before");
  // A ref starts the listing; the number in `next` continues it.
  const first = await page("main", 1);
  assert.deepEqual(
    first.rows.map((r) => r.message),
    ["b"],
  );
  assert.deepEqual(
    (await page(first.next!, 1)).rows.map((r) => r.message),
    ["a"],
  );
  await refused(client.call("history.list", { collection: "h", before: "nope" }), "ref_not_found");
  await refused(
    client.call("history.list", { collection: "h", before: "main@999999" }),
    "version_not_found",
  );
});
