import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { StoreClient } from "../../../src/store/client/client.ts";
import { servedStore } from "./fixture.ts";

async function refused(promise: Promise<unknown>, code: string) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof SkeinError, String(error));
    assert.equal(error.code, code, error.message);
    return true;
  });
}

describe("every verb over a real socket", async () => {
  const served = await servedStore(
    {},
    {
      maxPage: 50,
      keptVersions: 2,
      appendPruneKeepCeiling: 10,
      appendPruneRemovalCap: 3,
      changesMaxPage: 20,
      changesScanRecords: 5,
      changesNodeBudget: 8,
    },
  );
  const client = await served.connect();

  test("hello negotiates max_frame and names the server", () => {
    assert.equal(client.hello?.server, "skein-store");
    assert.equal(client.hello?.max_frame, 1 << 20);
    assert.equal(client.hello?.shards, 4);
    assert.equal(client.hello?.verbs, undefined, "verbs only when asked");
  });

  test("hello with verbs: true names the verbs the store serves", async () => {
    const asking = await StoreClient.connect(served.socketPath, { verbs: true });
    assert.ok(asking.hello?.verbs?.includes("document.append_prune"));
    assert.ok(asking.hello?.verbs?.includes("changes.list"));
    await asking.close();
  });

  test("collections.create | list | delete", async () => {
    const created = (await client.call("collections.create", { collection: "c1" })) as {
      receipt: { author: string };
    };
    assert.equal(created.receipt.author, "tester");
    await client.call("collections.create", { collection: "gone" });
    await client.call("collections.delete", { collection: "gone" });
    const list = (await client.call("collections.list", {})) as { rows: { name: string }[] };
    assert.deepEqual(
      list.rows.map((r) => r.name),
      ["c1"],
    );
  });

  test("document.put | get | delete | list and receipts", async () => {
    const receipt = (await client.call("document.put", {
      collection: "c1",
      key: "a",
      value: { hello: "world" },
    })) as { version: number; time: string; author: string };
    assert.equal(receipt.author, "tester");
    assert.match(receipt.time, /^\d{4}-\d\d-\d\dT/);
    await client.put("c1", [
      { key: "b", value: 2 },
      { key: "c", value: 3 },
    ]);
    assert.deepEqual(await client.get("c1", "a"), {
      found: true,
      value: { hello: "world" },
      version: receipt.version + 1,
    });
    assert.equal((await client.get("c1", "a", { version: receipt.version })).found, true);
    await client.call("document.delete", { collection: "c1", keys: ["c"] });
    const list = (await client.call("document.list", { collection: "c1" })) as {
      rows: { key: string }[];
      next: string | null;
    };
    assert.deepEqual(
      list.rows.map((r) => r.key),
      ["a", "b"],
    );
  });

  test("branches.create | list | delete with isolation", async () => {
    await client.call("branches.create", { collection: "c1", branch: "dev" });
    await client.call("document.put", { collection: "c1", branch: "dev", key: "x", value: 1 });
    assert.equal((await client.get("c1", "x")).found, false);
    assert.equal((await client.get("c1", "x", { branch: "dev" })).found, true);
    const list = (await client.call("branches.list", { collection: "c1" })) as {
      rows: { name: string }[];
    };
    assert.deepEqual(
      list.rows.map((r) => r.name),
      ["dev", "main"],
    );
    await client.call("branches.delete", { collection: "c1", branch: "dev" });
    await refused(client.get("c1", "x", { branch: "dev" }), "branch_not_found");
  });

  test("history.list pages newest first", async () => {
    const page = (await client.call("history.list", { collection: "c1", limit: 2 })) as {
      rows: { version: number }[];
      next: string | null;
    };
    assert.equal(page.rows.length, 2);
    assert.ok(page.rows[0]!.version > page.rows[1]!.version);
    assert.ok(page.next !== null);
  });

  test("document.append_prune keeps the newest `keep` entries, removing at most the cap", async () => {
    const first = (await client.call("document.append_prune", {
      collection: "c1",
      key: "memory",
      records: [1, 2, 3, 4, 5, 6],
      keep: 4,
    })) as { removed: number; length: number; first: number; last: number };
    assert.deepEqual(
      { removed: first.removed, length: first.length, first: first.first, last: first.last },
      { removed: 2, length: 4, first: 3, last: 6 },
    );
    const second = (await client.call("document.append_prune", {
      collection: "c1",
      key: "memory",
      records: [7, 8, 9, 10, 11],
      keep: 2,
    })) as { removed: number; length: number; first: number };
    // 9 entries, keep 2: 7 beyond keep, but the cap (3) bounds one call.
    assert.equal(second.removed, 3);
    assert.equal(second.length, 6);
    const log = (await client.call("document.list", {
      collection: "c1",
      prefix: "memory\u0000",
    })) as { rows: { value: number }[] };
    assert.deepEqual(
      log.rows.map((r) => r.value),
      [6, 7, 8, 9, 10, 11],
    );
    await refused(
      client.call("document.append_prune", {
        collection: "c1",
        key: "memory",
        records: [],
        keep: 11,
      }),
      "append_prune_keep_limit",
    );
  });

  test("changes.list pages by limit and scan bound with a cursor", async () => {
    const from = (await client.get("c1", "a")).version;
    const records = [];
    for (let i = 0; i < 12; i++)
      records.push({ key: `ch-${String(i).padStart(2, "0")}`, value: i });
    await client.put("c1", records);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = (await client.call("changes.list", {
        collection: "c1",
        from,
        limit: 20,
        ...(cursor === undefined ? {} : { cursor }),
      })) as { changes: { key: string; type: string }[]; cursor: string | null };
      // changes_scan_records is 5: no page examines more.
      assert.ok(page.changes.length <= 5);
      seen.push(...page.changes.map((c) => c.key));
      if (page.cursor === null) break;
      cursor = page.cursor;
    }
    const expected = [...records.map((r) => r.key), "a", "b", "c", "memory"].length;
    assert.ok(seen.length >= 12 && seen.length <= expected, `${seen.length} changes`);
    assert.deepEqual(
      seen.filter((k) => k.startsWith("ch-")).sort(),
      records.map((r) => r.key),
    );
    await refused(client.call("changes.list", { collection: "c1", from, limit: 21 }), "page_limit");
    await refused(
      client.call("changes.list", { collection: "c1", from, cursor: "bm9wZQ" }),
      "invalid_cursor",
    );
  });

  test("history.release reports unset keep settings", async () => {
    const result = (await client.call("history.release", {})) as {
      released: number;
      unset: string[];
    };
    assert.deepEqual(result, {
      considered: 0,
      released: 0,
      unset: ["retention.keep.versions", "retention.keep.days"],
      sweep: null,
    });
  });

  test("store.stats reports node bytes", async () => {
    const stats = (await client.call("store.stats", {})) as {
      node_entries: number;
      node_bytes: number;
    };
    assert.ok(stats.node_entries > 0 && stats.node_bytes > 0);
  });

  const refusals: [string, string, object][] = [
    ["page_limit", "document.list", { collection: "c1", limit: 51 }],
    ["page_limit", "history.list", { collection: "c1", limit: 51 }],
    ["page_limit", "collections.list", { limit: 51 }],
    ["page_limit", "branches.list", { collection: "c1", limit: 51 }],
    ["unknown_verb", "document.frobnicate", {}],
    ["invalid_request", "document.get", { collection: "c1" }],
    ["invalid_request", "document.put", { collection: "c1", key: "a" }],
    ["invalid_request", "document.put", { collection: "c1", key: "a\u0000b", value: 1 }],
    ["invalid_request", "collections.create", { collection: ".." }],
    ["invalid_request", "document.get", { collection: "c1", key: "a", extra: 1 }],
    ["collection_not_found", "document.get", { collection: "nope", key: "a" }],
    ["collection_exists", "collections.create", { collection: "c1" }],
    ["branch_not_found", "document.get", { collection: "c1", branch: "nope", key: "a" }],
    ["branch_exists", "branches.create", { collection: "c1", branch: "main" }],
    ["branch_protected", "branches.delete", { collection: "c1", branch: "main" }],
    ["version_not_found", "document.get", { collection: "c1", key: "a", version: 999999 }],
  ];
  for (const [code, verb, args] of refusals) {
    test(`${verb} ${JSON.stringify(args)} → ${code}`, async () => {
      await refused(client.call(verb, args), code);
    });
  }
});
