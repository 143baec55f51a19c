// The `denied` count as a key oracle (issue #30, item 4). A reader granted only `p/pub/` once
// recovered `priv/payroll` and `priv/zeta` by choosing `document.list` prefixes and reading
// `denied`. Replayed here as the attacker ran it (a search over prefixes, one character at a
// time), with every part of the answer as the oracle (`denied`, the rows, whether a page
// continues), and its variants: a position of the caller's choosing, a sealed position given
// to another range, `changes.list`'s cursor and `query.run`'s prefix. Each must recover nothing.

import assert from "node:assert/strict";
import { test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { agent, DATABASE, idpStore, runIdp } from "./support.ts";

const idp = await runIdp();
const served = await idpStore(idp, { placement: true });
const admin = await agent(idp, "admin-oracle", [["admin", `db/${DATABASE}`]]);
const owner = await served.connect(admin.pass);
await owner.call("collections.create", { collection: "notes" });
const base = (await owner.put("notes", [{ key: "pub/0", value: 0 }])).version;
await owner.put("notes", [
  { key: "pub/a", value: "open-a" },
  { key: "pub/b", value: "open-b" },
  { key: "priv/payroll", value: "HIDDEN-PAYROLL" },
  { key: "priv/zeta", value: "HIDDEN-ZETA" },
]);
const reader = await agent(idp, "reader-oracle", [
  ["read", `db/${DATABASE}/c/notes/b/main/p/pub/`],
]);
const client = await served.connect(reader.pass);

/** An answer as the attacker sees it: the page (a sealed position only as "continues"), or the refusal code. */
async function observe(c: StoreClient, verb: string, args: object): Promise<string> {
  try {
    const page = (await c.call(verb, args)) as Record<string, unknown>;
    const shown = { ...page };
    for (const field of ["next", "cursor"]) {
      if (typeof shown[field] === "string") shown[field] = "continues";
    }
    return JSON.stringify(shown);
  } catch (error) {
    assert.ok(error instanceof SkeinError, String(error));
    return `refused ${error.code}`;
  }
}

const ALPHABET = "abcdefghijklmnopqrstuvwxyz/";

/**
 * The attack: a key hides under P when the answer for P differs from the answer for a prefix
 * under which nothing is stored; extend P one character at a time while it does, and report
 * each P under which no longer prefix hides anything.
 */
async function recover(probe: (prefix: string) => Promise<string>): Promise<string[]> {
  const empty = await probe("~nothing~");
  const found: string[] = [];
  const visit = async (prefix: string, depth: number) => {
    let deeper = false;
    for (const c of ALPHABET) {
      if ((await probe(prefix + c)) !== empty) {
        deeper = true;
        if (depth < 14) await visit(prefix + c, depth + 1);
      }
    }
    if (!deeper && prefix !== "") found.push(prefix);
  };
  // Only what hides outside the reader's own prefix is a finding.
  for (const start of ["pr", "q", "a"]) {
    if ((await probe(start)) !== empty) await visit(start, start.length);
  }
  return found;
}

test("the reported attack: document.list prefixes read through denied recover no key", async () => {
  for (const limit of [1000, 1]) {
    const found = await recover((prefix) =>
      observe(client, "document.list", { collection: "notes", prefix, limit }),
    );
    assert.deepEqual(found, [], `limit ${limit}`);
  }
  // The reader still lists what it may read: its own prefix, and the branch with the rows it
  // may not read left out and counted (a count over the whole branch, which no prefix narrows).
  const own = (await client.call("document.list", { collection: "notes", prefix: "pub/" })) as {
    rows: { key: string }[];
    denied: number;
  };
  assert.deepEqual(
    own.rows.map((r) => r.key),
    ["pub/0", "pub/a", "pub/b"],
  );
  assert.equal(own.denied, 0);
  const all = (await client.call("document.list", { collection: "notes" })) as {
    rows: { key: string }[];
    denied: number;
  };
  assert.deepEqual(
    all.rows.map((r) => r.key),
    ["pub/0", "pub/a", "pub/b"],
  );
  assert.equal(all.denied, 2);
});

test("a position of the reader's choosing cannot place a page among the keys it may not read", async () => {
  // Binary search over `after` with one-row pages: which key follows a chosen position.
  const answers = new Set<string>();
  for (const after of ["a", "priv/", "priv/p", "priv/payroll", "priv/q", "priv/zeta", "pua"]) {
    answers.add(await observe(client, "document.list", { collection: "notes", after, limit: 1 }));
  }
  assert.deepEqual([...answers], ["refused permission_denied"]);
  // Within its own prefix a chosen position is the reader's business.
  const within = (await client.call("document.list", {
    collection: "notes",
    prefix: "pub/",
    after: "pub/0",
  })) as { rows: { key: string }[] };
  assert.deepEqual(
    within.rows.map((r) => r.key),
    ["pub/a", "pub/b"],
  );
});

test("a sealed position is good only for the range it was issued in", async () => {
  // The first page ends on a row the reader may not read (priv/payroll sorts first).
  const first = (await client.call("document.list", { collection: "notes", limit: 1 })) as {
    rows: unknown[];
    next: string;
  };
  assert.deepEqual(first.rows, []);
  // Given to a range the reader reads whole, it would show where the hidden key sorts.
  for (const args of [{ prefix: "pub/" }, { prefix: "pub/", limit: 1 }, { version: base }]) {
    const moved = await observe(client, "document.list", {
      collection: "notes",
      after: first.next,
      ...args,
    });
    assert.equal(moved, "refused invalid_cursor", JSON.stringify(args));
  }
  const second = (await client.call("document.list", {
    collection: "notes",
    limit: 1,
    after: first.next,
  })) as { rows: unknown[]; denied: number };
  assert.deepEqual(second.rows, []);
  assert.equal(second.denied, 1);
});

test("changes.list: the reader pages the changes it may read; a cursor of its own is refused", async () => {
  const page = (await client.call("changes.list", { collection: "notes", from: base })) as {
    changes: { key: string }[];
    denied: number;
  };
  assert.deepEqual(page.changes.map((c) => c.key).sort(), ["pub/a", "pub/b"]);
  assert.equal(page.denied, 2);
  assert.doesNotMatch(JSON.stringify(page), /priv|HIDDEN/);
  const chosen = await observe(client, "changes.list", {
    collection: "notes",
    from: base,
    cursor: "AAAAAAAA",
  });
  assert.equal(chosen, "refused permission_denied");
});

test("query.run answers a prefix the same whether or not keys hide under it", async () => {
  // This store runs no queries: a decided query is refused query_disabled.
  const answers = new Map<string, string>();
  for (const prefix of ["priv/", "priv/p", "priv/payroll", "priv/q", "q", "p", ""]) {
    answers.set(
      prefix,
      await observe(client, "query.run", { collection: "notes", prefix, code: "record" }),
    );
  }
  assert.deepEqual(new Set(answers.values()), new Set(["refused permission_denied"]));
  // A prefix the reader may read whole is decided on those records alone.
  const own = await observe(client, "query.run", {
    collection: "notes",
    prefix: "pub/",
    code: "record",
  });
  assert.equal(own, "refused query_disabled");
});
