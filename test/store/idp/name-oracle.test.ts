// The `denied` count as a name oracle (issue #30, item 4, on the name lists). A reader
// allowed some collections, branches or tags once recovered the others' names by choosing
// `after` and reading `denied`: replayed here as a search that spells out, one character at a
// time, the first hidden name after a chosen point. Each list must recover nothing, and still
// list what the reader may read, from the start, with the hidden rows only counted.

import assert from "node:assert/strict";
import { test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { NAME_SCAN_ROWS } from "../../../src/store/idp/name-pages.ts";
import { agent, clientPass, DATABASE, idpStore, refusal, runIdp } from "./support.ts";

const idp = await runIdp();
const served = await idpStore(idp, { placement: true });
const admin = await agent(idp, "admin-names", [["admin", `db/${DATABASE}`]]);
const owner = await served.connect(admin.pass);
for (const collection of ["notes", "payroll", "pub", "zeta"]) {
  await owner.call("collections.create", { collection });
}
for (const branch of ["open", "payroll", "zeta"]) {
  await owner.call("branches.create", { collection: "notes", branch });
}
await owner.call("tags.create", { collection: "notes", tag: "open-1", branch: "open" });
for (const tag of ["payroll", "zeta"]) {
  await owner.call("tags.create", { collection: "notes", tag, branch: "main" });
}
// Reads the collection `pub` and the branch `notes/open` (and so the tags taken on it).
const reader = await agent(idp, "reader-names", [
  ["read", `db/${DATABASE}/c/pub`],
  ["read", `db/${DATABASE}/c/notes/b/open`],
]);
const client = await served.connect(reader.pass);

const LISTS = [
  { verb: "collections.list", args: {}, seen: ["pub"], hidden: ["notes", "payroll", "zeta"] },
  {
    verb: "branches.list",
    args: { collection: "notes" },
    seen: ["open"],
    hidden: ["main", "payroll", "zeta"],
  },
  {
    verb: "tags.list",
    args: { collection: "notes" },
    seen: ["open-1"],
    hidden: ["payroll", "zeta"],
  },
] as const;

type Page = { rows: { name: string }[]; next: string | null; denied: number };

/** Every page of a list from `after` (the start when undefined), following `next`. */
async function pages(c: StoreClient, verb: string, args: object, after?: string): Promise<Page[]> {
  const out: Page[] = [];
  let at = after;
  do {
    const page = (await c.call(verb, {
      ...args,
      ...(at === undefined ? {} : { after: at }),
    })) as Page;
    out.push(page);
    at = page.next ?? undefined;
  } while (at !== undefined);
  return out;
}

/** The attacker's oracle: how many hidden names the list counts after `after` (NaN: refused). */
function hiddenAfter(verb: string, args: object): (after: string) => Promise<number> {
  return async (after) => {
    try {
      return (await pages(client, verb, args, after)).reduce((n, p) => n + p.denied, 0);
    } catch (error) {
      assert.ok(error instanceof SkeinError, String(error));
      return Number.NaN;
    }
  };
}

const ALPHABET = "-0123456789abcdefghijklmnopqrstuvwxyz";
const TOP = "z".repeat(40);

/**
 * The attack: the first hidden name after `x` is spelled one character at a time, taking the
 * least character `c` for which a hidden name after `x` sorts at or before `q + c + "zzz…"`;
 * it is whole when the count after `q` itself drops. Then it continues after that name.
 */
async function recover(count: (after: string) => Promise<number>): Promise<string[]> {
  const found: string[] = [];
  let above = await count("-");
  while (above > 0 && found.length < 8) {
    let q = "";
    for (;;) {
      let next: string | undefined;
      for (const c of ALPHABET) {
        if ((await count(q + c + TOP)) < above) {
          next = c;
          break;
        }
      }
      if (next === undefined || q.length > 40) return found;
      q += next;
      if ((await count(q)) < above) break;
    }
    found.push(q);
    above = await count(q);
  }
  return found;
}

for (const list of LISTS) {
  test(`${list.verb}: choosing after and reading denied recovers no hidden name`, async () => {
    assert.deepEqual(await recover(hiddenAfter(list.verb, list.args)), []);
    // One-row pages after a chosen point (which name follows it) are refused alike.
    const answers = new Set<string>();
    for (const after of ["a", "m", "payroll", "q", "zeta"]) {
      const chosen = client.call(list.verb, { ...list.args, after, limit: 1 });
      answers.add((await refusal(chosen)).code);
    }
    assert.deepEqual([...answers], ["permission_denied"]);
  });

  test(`${list.verb}: the reader pages from the start with the store's positions`, async () => {
    for (const limit of [1, 100]) {
      const all = await pages(client, list.verb, { ...list.args, limit });
      assert.deepEqual(
        all.flatMap((p) => p.rows.map((r) => r.name)),
        [...list.seen],
      );
      assert.equal(
        all.reduce((n, p) => n + p.denied, 0),
        list.hidden.length,
      );
      for (const page of all) {
        const shown = JSON.stringify({ ...page, next: null });
        for (const name of list.hidden) assert.ok(!shown.includes(`"${name}"`), shown);
      }
    }
  });
}

test("a reader of the whole database chooses its own position and is asked about no row", async () => {
  const whole = await agent(idp, "reader-db", [["read", `db/${DATABASE}`]]);
  const c = await served.connect(whole.pass);
  for (const list of LISTS) {
    const before = served.gate.requestsSent;
    const page = (await c.call(list.verb, { ...list.args, after: "o" })) as Page;
    assert.equal(served.gate.requestsSent - before, 1, list.verb);
    assert.equal(page.denied, 0);
    assert.deepEqual(
      page.rows.map((r) => r.name),
      [...list.seen, ...list.hidden].filter((n) => n > "o").sort(),
    );
  }
});

test("a reader of a whole collection is still a partial reader of its branches", async () => {
  // A collection grant covers only the branches placed under it: a branch whose placement is
  // gone is denied to the collection's reader, so its after would be an oracle too.
  await owner.call("branches.create", { collection: "notes", branch: "stray" });
  const [id, secret] = served.credential!.split(":") as [string, string];
  const app = await clientPass(idp.issuer, id, secret, DATABASE);
  const removed = await fetch(
    new URL(`/placement/v1/databases/${DATABASE}/collections/notes/branches/stray`, idp.issuer),
    { method: "DELETE", headers: { authorization: `Bearer ${app}` } },
  );
  assert.equal(removed.status, 200);
  const collectionReader = await agent(idp, "reader-notes-all", [
    ["read", `db/${DATABASE}/c/notes`],
  ]);
  const c = await served.connect(collectionReader.pass);
  const all = await pages(c, "branches.list", { collection: "notes", limit: 1 });
  assert.deepEqual(
    all.flatMap((p) => p.rows.map((r) => r.name)),
    ["main", "open", "payroll", "zeta"],
  );
  assert.equal(
    all.reduce((n, p) => n + p.denied, 0),
    1,
  );
  const chosen = c.call("branches.list", { collection: "notes", after: "s" });
  assert.equal((await refusal(chosen)).code, "permission_denied");
});

/** The pages a reader of `own` sees whatever else the list holds: `hidden` counted at the end. */
function blind(own: readonly string[], hidden: number, limit: number) {
  const pages: { rows: string[]; denied: number; last: boolean }[] = [];
  for (let at = 0; at < own.length || pages.length === 0; at += limit) {
    const last = at + limit >= own.length;
    pages.push({ rows: own.slice(at, at + limit), denied: last ? hidden : 0, last });
  }
  return pages;
}

const seenAs = (all: Page[]) =>
  all.map((p) => ({ rows: p.rows.map((r) => r.name), denied: p.denied, last: p.next === null }));

test("tags.list: a writer placing tags of its own among hidden ones learns nothing of where they sort", async () => {
  await owner.call("collections.create", { collection: "tagged" });
  await owner.call("branches.create", { collection: "tagged", branch: "open" });
  for (const tag of ["payroll", "zeta"]) {
    await owner.call("tags.create", { collection: "tagged", tag, branch: "main" });
  }
  const writer = await agent(idp, "writer-tags", [["write", `db/${DATABASE}/c/tagged/b/open`]]);
  const c = await served.connect(writer.pass);
  const own: string[] = [];
  // Each round places more names around the hidden ones (`payroll` and `zeta`), as a search
  // for them would; the pages must look as if the hidden tags sorted nowhere.
  for (const round of [
    ["a-own", "m-own", "q-own"],
    ["pb-own", "zz-own", "p"],
  ]) {
    for (const tag of round) {
      await c.call("tags.create", { collection: "tagged", tag, branch: "open" });
      own.push(tag);
    }
    own.sort();
    for (const limit of [1, 2, 3]) {
      const all = await pages(c, "tags.list", { collection: "tagged", limit });
      assert.deepEqual(seenAs(all), blind(own, 2, limit), `limit ${limit}`);
    }
  }
});

test("a filled page ends after NAME_SCAN_ROWS rows examined and the list continues exactly", async () => {
  await owner.call("collections.create", { collection: "many" });
  await owner.call("branches.create", { collection: "many", branch: "open" });
  const hidden = Array.from(
    { length: NAME_SCAN_ROWS + 50 },
    (_, i) => `h${String(i).padStart(5, "0")}`,
  );
  for (const tag of hidden) {
    await owner.call("tags.create", { collection: "many", tag, branch: "main" });
  }
  for (const tag of ["a", "z"]) {
    await owner.call("tags.create", { collection: "many", tag, branch: "open" });
  }
  const r = await agent(idp, "reader-many", [["read", `db/${DATABASE}/c/many/b/open`]]);
  const c = await served.connect(r.pass);
  const all = await pages(c, "tags.list", { collection: "many", limit: 2 });
  assert.deepEqual(
    all.flatMap((p) => p.rows.map((row) => row.name)),
    ["a", "z"],
  );
  assert.equal(
    all.reduce((n, p) => n + p.denied, 0),
    hidden.length,
  );
  // The run of hidden tags is longer than a page may examine: the first page ends early.
  assert.ok(all.length > 1, JSON.stringify(seenAs(all)));
});
