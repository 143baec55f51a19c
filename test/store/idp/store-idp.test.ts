// The store with `idp`, against the real `skein-idp` process: passes at hello, a decision for
// every act per verb and resource level, record-level denial in pages (counted, never
// leaked), placement, an IdP stopped mid-run, and the store's live bounds.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { test } from "node:test";
import { importJWK, SignJWT } from "jose";
import type { StoreClient } from "../../../src/store/client/client.ts";
import {
  agent,
  clientPass,
  DATABASE,
  grant,
  idpCli,
  idpStore,
  type RunningIdp,
  refusal,
  runIdp,
} from "./support.ts";

/** A pass signed with the IdP's own signing key, with the claims given (expiry tests). */
async function signedPass(idp: RunningIdp, claims: Record<string, unknown>): Promise<string> {
  const keys = JSON.parse(readFileSync(`${idp.dataDir}/keys.json`, "utf8")) as {
    signing: { kid: string; alg?: string }[];
  };
  const jwk = keys.signing[0]!;
  const key = await importJWK(jwk, "ES256");
  return new SignJWT({ skein_subject_type: "client", client_id: "forged", ...claims })
    .setProtectedHeader({ alg: "ES256", kid: jwk.kid, typ: "at+jwt" })
    .sign(key);
}

const idp = await runIdp();
const served = await idpStore(idp, { placement: true });
const admin = await agent(idp, "admin1", [["admin", `db/${DATABASE}`]]);
const adminClient = await served.connect(admin.pass);
await adminClient.call("collections.create", { collection: "notes" });
await adminClient.call("collections.create", { collection: "secret" });
await adminClient.call("branches.create", { collection: "notes", branch: "dev" });
const base = (await adminClient.put("notes", [{ key: "pub/0", value: 0 }])).version;
await adminClient.put("notes", [
  { key: "pub/a", value: "open-a" },
  { key: "pub/b", value: "open-b" },
  { key: "priv/x", value: "HIDDEN-VALUE-X" },
  { key: "priv/y", value: "HIDDEN-VALUE-Y" },
]);

test("hello without a pass, with a forged one, or one for another database is refused by name", async () => {
  const none = await refusal(served.connect());
  assert.equal(none.code, "pass_required");
  // Named so a gateway (the door) learns which database's pass this store takes.
  assert.match(none.message, /\(audience urn:skein:store:db1\)$/);
  const forged = `${admin.pass.slice(0, -4)}AAAA`;
  assert.equal((await refusal(served.connect(forged))).code, "pass_invalid");
  assert.equal((await refusal(served.connect("not-a-jwt"))).code, "pass_invalid");
  const other = await clientPass(idp.issuer, "admin1", admin.secret, "db2");
  assert.equal((await refusal(served.connect(other))).code, "pass_wrong_audience");
});

test("a pass from another issuer is pass_foreign_issuer", async () => {
  const foreign = await runIdp();
  const { pass } = await agent(foreign, "admin1", [["admin", `db/${DATABASE}`]]);
  assert.equal((await refusal(served.connect(pass))).code, "pass_foreign_issuer");
  await foreign.stop();
});

test("an expired pass is refused at hello, and acts are refused once a pass expires", async () => {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: idp.issuer, sub: "admin1", aud: `urn:skein:store:${DATABASE}` };
  const expired = await signedPass(idp, { ...claims, iat: now - 120, exp: now - 60 });
  assert.equal((await refusal(served.connect(expired))).code, "pass_expired");
  const short = await signedPass(idp, { ...claims, iat: now, exp: now + 2 });
  const client = await served.connect(short);
  // Time passes on purpose: the pass's exp (whole seconds) runs out.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.equal((await refusal(client.get("notes", "pub/a"))).code, "pass_expired");
});

// Each row: a grant (or none), then acts with the expected outcome (true: allowed, else code).
const table: {
  name: string;
  grants: [string, string][];
  acts: [verb: string, args: object, expected: true | string][];
}[] = [
  {
    name: "read on the collection",
    grants: [["read", `db/${DATABASE}/c/notes`]],
    acts: [
      ["document.get", { collection: "notes", key: "pub/a" }, true],
      ["document.get", { collection: "notes", branch: "dev", key: "pub/a" }, true],
      ["history.list", { collection: "notes" }, true],
      ["document.get", { collection: "secret", key: "k" }, "permission_denied"],
      ["document.put", { collection: "notes", key: "k", value: 1 }, "permission_denied"],
      ["branches.create", { collection: "notes", branch: "x" }, "permission_denied"],
      ["store.stats", {}, "permission_denied"],
      ["collections.create", { collection: "new1" }, "permission_denied"],
    ],
  },
  {
    name: "write on one branch",
    grants: [["write", `db/${DATABASE}/c/notes/b/dev`]],
    acts: [
      ["document.put", { collection: "notes", branch: "dev", key: "w", value: 1 }, true],
      ["document.get", { collection: "notes", branch: "dev", key: "w" }, true],
      ["document.put", { collection: "notes", key: "w", value: 1 }, "permission_denied"],
      ["document.delete", { collection: "notes", branch: "dev", keys: ["w", "w2"] }, true],
      ["history.list", { collection: "notes", branch: "dev" }, true],
      ["branches.delete", { collection: "notes", branch: "dev" }, "permission_denied"],
      // A ref reads the branch it names: main through a request on dev is main's read.
      [
        "document.get",
        { collection: "notes", branch: "dev", key: "pub/0", version: "main" },
        "permission_denied",
      ],
      // A merge writes into and reads from: write on dev alone does not reach main.
      [
        "branches.merge",
        { collection: "notes", from: "main", into: "dev", dry_run: true },
        "permission_denied",
      ],
      ["tags.create", { collection: "notes", tag: "t-dev", branch: "dev" }, true],
      // A tag is read on the branch it was taken from, whatever the request's branch.
      ["document.get", { collection: "notes", key: "pub/0", version: "t-dev" }, true],
      // history.list's `before` ref reads the branch it names (its head bounds the page).
      ["history.list", { collection: "notes", branch: "dev", before: "t-dev" }, true],
      ["history.list", { collection: "notes", branch: "dev", before: "main" }, "permission_denied"],
      ["tags.delete", { collection: "notes", tag: "t-dev" }, "permission_denied"],
      ["branches.revert", { collection: "notes", version: 1 }, "permission_denied"],
    ],
  },
  {
    name: "write on the collection",
    grants: [["write", `db/${DATABASE}/c/notes`]],
    acts: [
      ["branches.merge", { collection: "notes", from: "dev", into: "main", dry_run: true }, true],
      ["tags.list", { collection: "notes" }, true],
    ],
  },
  {
    name: "read on a key prefix",
    grants: [["read", `db/${DATABASE}/c/notes/b/main/p/pub/`]],
    acts: [
      ["document.get", { collection: "notes", key: "pub/a" }, true],
      ["document.get", { collection: "notes", key: "priv/x" }, "permission_denied"],
      // Nothing above the record level: the branch's history is not covered.
      ["history.list", { collection: "notes" }, "permission_denied"],
    ],
  },
  {
    name: "admin on the database",
    grants: [["admin", `db/${DATABASE}`]],
    acts: [
      ["store.stats", {}, true],
      ["history.release", {}, true],
      ["collections.create", { collection: "made" }, true],
      ["branches.create", { collection: "made", branch: "b2" }, true],
      ["branches.delete", { collection: "made", branch: "b2" }, true],
      ["collections.delete", { collection: "made" }, true],
    ],
  },
  {
    name: "no grant",
    grants: [],
    acts: [
      ["document.get", { collection: "notes", key: "pub/a" }, "permission_denied"],
      ["document.get", { collection: "nowhere", key: "k" }, "permission_denied"],
    ],
  },
];

for (const [i, row] of table.entries()) {
  test(`allow and deny: ${row.name}`, async () => {
    const { pass } = await agent(idp, `agent-t${i}`, row.grants);
    const client = await served.connect(pass);
    for (const [verb, args, expected] of row.acts) {
      const what = `${verb} ${JSON.stringify(args)}`;
      if (expected === true) await assert.doesNotReject(client.call(verb, args), what);
      else assert.equal((await refusal(client.call(verb, args))).code, expected, what);
    }
  });
}

test("document.list and changes.list leave out denied records and count them", async () => {
  const { pass } = await agent(idp, "reader-pub", [
    ["read", `db/${DATABASE}/c/notes/b/main/p/pub/`],
  ]);
  const client = await served.connect(pass);
  const list = (await client.call("document.list", { collection: "notes" })) as {
    rows: { key: string }[];
    denied: number;
  };
  assert.deepEqual(
    list.rows.map((r) => r.key),
    ["pub/0", "pub/a", "pub/b"],
  );
  assert.equal(list.denied, 2);
  const changes = (await client.call("changes.list", { collection: "notes", from: base })) as {
    changes: { key: string }[];
    denied: number;
  };
  assert.ok(changes.changes.every((c) => c.key.startsWith("pub/")));
  assert.equal(changes.changes.length + changes.denied, 4);
  assert.equal(changes.denied, 2);
  for (const page of [list, changes]) {
    const text = JSON.stringify(page);
    assert.doesNotMatch(text, /priv|HIDDEN/);
  }
});

/** Every string a page shows, as sent and decoded as base64url (a cursor in clear is). */
function revealed(page: unknown): string {
  const texts = [JSON.stringify(page)];
  const visit = (value: unknown) => {
    if (typeof value === "string") {
      for (const text of [value, value.replace(/^~/, "")]) {
        texts.push(Buffer.from(text, "base64url").toString("latin1"));
      }
    } else if (typeof value === "object" && value !== null) {
      for (const v of Object.values(value)) visit(v);
    }
  };
  visit(page);
  return texts.join("\n");
}

/** Pages of `verb` from the start until the last, each page's position given back as `field`. */
async function allPages(
  client: StoreClient,
  verb: string,
  args: Record<string, unknown>,
  position: { result: string; request: string },
): Promise<Record<string, unknown>[]> {
  const pages: Record<string, unknown>[] = [];
  let at: unknown = null;
  do {
    const page = (await client.call(verb, {
      ...args,
      ...(at === null ? {} : { [position.request]: at }),
    })) as Record<string, unknown>;
    pages.push(page);
    at = page[position.result];
    // Six rows at most in these lists: a page that never ends is the bug under test.
    assert.ok(pages.length <= 8, `${verb} did not end: ${JSON.stringify(pages)}`);
  } while (at !== null);
  return pages;
}

test("small pages never name a denied row, in rows or in the position they continue from", async () => {
  const { pass } = await agent(idp, "reader-paged", [
    ["read", `db/${DATABASE}/c/notes/b/main/p/pub/`],
  ]);
  const client = await served.connect(pass);
  const list = { result: "next", request: "after" };
  for (const limit of [1, 2, 3]) {
    const docs = await allPages(client, "document.list", { collection: "notes", limit }, list);
    // Exactly the allowed rows, in order, none repeated or lost; every denied row counted once.
    assert.deepEqual(
      docs.flatMap((p) => (p.rows as { key: string }[]).map((r) => r.key)),
      ["pub/0", "pub/a", "pub/b"],
    );
    assert.equal(
      docs.reduce((n, p) => n + (p.denied as number), 0),
      2,
    );
    const changes = await allPages(
      client,
      "changes.list",
      { collection: "notes", from: base, limit },
      { result: "cursor", request: "cursor" },
    );
    assert.deepEqual(
      changes.flatMap((p) => (p.changes as { key: string }[]).map((r) => r.key)).sort(),
      ["pub/a", "pub/b"],
    );
    assert.equal(
      changes.reduce((n, p) => n + (p.denied as number), 0),
      2,
    );
    for (const page of [...docs, ...changes]) {
      assert.doesNotMatch(revealed(page), /priv|HIDDEN/, JSON.stringify(page));
    }
  }
  // A prefix grant covers no collection: every row of collections.list is denied, and the
  // pages still end without naming one.
  const collections = await allPages(client, "collections.list", { limit: 1 }, list);
  assert.ok(collections.every((p) => (p.rows as unknown[]).length === 0));
  for (const page of collections) assert.doesNotMatch(revealed(page), /notes|secret/);
  // A position is good only for the verb it was sealed for, and only untouched.
  const first = (await client.call("document.list", { collection: "notes", limit: 1 })) as {
    next: string;
  };
  const forged = `${first.next.slice(0, -2)}${first.next.endsWith("AA") ? "BB" : "AA"}`;
  for (const [verb, args] of [
    ["document.list", { collection: "notes", after: forged }],
    ["branches.list", { collection: "notes", after: first.next }],
    ["changes.list", { collection: "notes", from: base, cursor: first.next }],
  ] as const) {
    assert.equal((await refusal(client.call(verb, args))).code, "invalid_cursor", verb);
  }
  // A position of the caller's own choosing is taken as it is within a prefix the caller may
  // read whole; over a range holding records it may not read, it is refused (a chosen
  // position would tell where those records lie).
  const chosen = client.call("document.list", { collection: "notes", after: "pub/0" });
  assert.equal((await refusal(chosen)).code, "permission_denied");
  const own = (await client.call("document.list", {
    collection: "notes",
    prefix: "pub/",
    after: "pub/0",
  })) as { rows: { key: string }[] };
  assert.deepEqual(
    own.rows.map((r) => r.key),
    ["pub/a", "pub/b"],
  );
});

test("changes_scan_records counts the denied changes a changes.list page examined", async () => {
  const scanned = await idpStore(idp, { placement: true, changesScanRecords: 2 });
  const owner = await scanned.connect(admin.pass);
  await owner.call("collections.create", { collection: "scanned" });
  const from = (await owner.put("scanned", [{ key: "pub/0", value: 0 }])).version;
  const keys = ["priv/x", "priv/y", "pub/a", "pub/b"];
  await owner.put(
    "scanned",
    keys.map((key) => ({ key, value: key })),
  );
  const { pass } = await agent(idp, "reader-scan", [
    ["read", `db/${DATABASE}/c/scanned/b/main/p/pub/`],
  ]);
  const client = await scanned.connect(pass);
  const pages = await allPages(
    client,
    "changes.list",
    { collection: "scanned", from, limit: 10 },
    { result: "cursor", request: "cursor" },
  );
  // Each page examined at most two changes, the denied ones among them; all four were
  // examined once (the changes are in shard order, so which page holds which is not fixed).
  const examined = pages.map((p) => (p.changes as unknown[]).length + (p.denied as number));
  assert.ok(
    examined.every((n) => n <= 2),
    JSON.stringify(pages),
  );
  assert.equal(
    examined.reduce((a, b) => a + b, 0),
    4,
  );
  assert.deepEqual(
    pages.flatMap((p) => (p.changes as { key: string }[]).map((c) => c.key)).sort(),
    ["pub/a", "pub/b"],
  );
});

test("a page of 1,000 records is decided in one batch request", async () => {
  const records = Array.from({ length: 1_000 }, (_, i) => ({
    key: `bulk/${String(i).padStart(4, "0")}`,
    value: i,
  }));
  await adminClient.put("notes", records);
  const { pass } = await agent(idp, "reader-bulk", [["read", `db/${DATABASE}/c/notes`]]);
  const client = await served.connect(pass);
  const before = served.gate.requestsSent;
  const page = (await client.call("document.list", {
    collection: "notes",
    prefix: "bulk/",
    limit: 1_000,
  })) as { rows: unknown[]; denied: number };
  assert.equal(served.gate.requestsSent - before, 1);
  assert.equal(page.rows.length, 1_000);
  assert.equal(page.denied, 0);
});

test("collections.list shows only the collections the caller may read", async () => {
  const { pass } = await agent(idp, "reader-notes", [["read", `db/${DATABASE}/c/notes`]]);
  const client = await served.connect(pass);
  const page = (await client.call("collections.list", {})) as {
    rows: { name: string }[];
    denied: number;
  };
  assert.deepEqual(
    page.rows.map((r) => r.name),
    ["notes"],
  );
  assert.ok(page.denied >= 1);
});

test("placement: a created collection is placed with its main branch, and a delete removes it", async () => {
  const { pass } = await agent(idp, "reader-placed", [["read", `db/${DATABASE}/c/placed`]]);
  await adminClient.call("collections.create", { collection: "placed" });
  await adminClient.put("placed", [{ key: "k", value: 1 }]);
  const reader = await served.connect(pass);
  // A collection-level grant applies only to a placed collection (contract's decision rule).
  assert.deepEqual(await reader.get("placed", "k"), {
    found: true,
    value: 1,
    version: (await reader.get("placed", "k")).version,
  });
  await adminClient.call("collections.delete", { collection: "placed" });
  assert.deepEqual(served.warnings, []);
  // Recreated by a store without placement, the same grant no longer applies.
  const unplaced = await idpStore(idp);
  const admin2 = await unplaced.connect(admin.pass);
  await admin2.call("collections.create", { collection: "placed" });
  const reader2 = await unplaced.connect(pass);
  assert.equal((await refusal(reader2.get("placed", "k"))).code, "permission_denied");
});

test("placement: a created branch is placed, and deleting the branch removes its placement", async () => {
  await adminClient.call("collections.create", { collection: "branched" });
  await adminClient.call("branches.create", { collection: "branched", branch: "feat" });
  await adminClient.put("branched", [{ key: "k", value: "on-feat" }], { branch: "feat" });
  const { pass } = await agent(idp, "reader-feat", [["read", `db/${DATABASE}/c/branched/b/feat`]]);
  const reader = await served.connect(pass);
  // A branch-level grant applies only to a placed branch: this read shows feat is placed.
  assert.equal((await reader.get("branched", "k", { branch: "feat" })).value, "on-feat");
  await adminClient.call("branches.delete", { collection: "branched", branch: "feat" });
  assert.deepEqual(served.warnings, []);
  // The collection stays placed; feat made again by a store without placement is not placed,
  // so the same grant no longer covers it (it would, had the delete left feat's placement).
  const unplaced = await idpStore(idp);
  const admin2 = await unplaced.connect(admin.pass);
  await admin2.call("collections.create", { collection: "branched" });
  await admin2.call("branches.create", { collection: "branched", branch: "feat" });
  await admin2.put("branched", [{ key: "k", value: "again" }], { branch: "feat" });
  const reader2 = await unplaced.connect(pass);
  const error = await refusal(reader2.get("branched", "k", { branch: "feat" }));
  assert.equal(error.code, "permission_denied");
  // The control: a branch still placed (main, placed with the collection) is covered.
  grant(idp, "client:reader-feat", "read", `db/${DATABASE}/c/branched/b/main`);
  await admin2.put("branched", [{ key: "m", value: "on-main" }]);
  assert.equal((await reader2.get("branched", "m")).value, "on-main");
});

test("the IdP refuses a placement (placement freeze): the create is placement_failed and nothing is made", async () => {
  const names = async (verb: string, args: Record<string, unknown>) =>
    ((await adminClient.call(verb, args)) as { rows: { name: string }[] }).rows.map((r) => r.name);
  await adminClient.call("collections.create", { collection: "removed-while-frozen" });
  assert.deepEqual(JSON.parse(idpCli(idp, "placement", "freeze", DATABASE)), {
    database: DATABASE,
    frozen: true,
    changed: true,
  });
  try {
    const collection = await refusal(
      adminClient.call("collections.create", { collection: "frozen" }),
    );
    assert.equal(collection.code, "placement_failed");
    assert.match(collection.message, /HTTP 409 placement_frozen/);
    const branch = await refusal(
      adminClient.call("branches.create", { collection: "notes", branch: "frozen" }),
    );
    assert.equal(branch.code, "placement_failed");
    // Nothing half-made: neither exists in the store.
    assert.ok(!(await names("collections.list", {})).includes("frozen"));
    assert.ok(!(await names("branches.list", { collection: "notes" })).includes("frozen"));
    // Removals go on while frozen: a delete removes its placement without a warning.
    await adminClient.call("collections.delete", { collection: "removed-while-frozen" });
    assert.deepEqual(served.warnings, []);
  } finally {
    idpCli(idp, "placement", "thaw", DATABASE);
  }
  // Thawed, the same creates are placed and made.
  await adminClient.call("collections.create", { collection: "frozen" });
  await adminClient.call("branches.create", { collection: "notes", branch: "frozen" });
  await adminClient.call("branches.delete", { collection: "notes", branch: "frozen" });
  await adminClient.call("collections.delete", { collection: "frozen" });
  assert.deepEqual(served.warnings, []);
});

test("an IdP stopped mid-run: acts are refused, then served again when it returns", async () => {
  const { pass } = await agent(idp, "reader-restart", [["read", `db/${DATABASE}/c/notes`]]);
  const client: StoreClient = await served.connect(pass);
  await client.get("notes", "pub/a");
  await idp.stop();
  try {
    assert.equal((await refusal(client.get("notes", "pub/a"))).code, "idp_unavailable");
    const list = await refusal(client.call("document.list", { collection: "notes" }));
    assert.equal(list.code, "idp_unavailable");
  } finally {
    await idp.start();
  }
  assert.equal((await client.get("notes", "pub/a")).value, "open-a");
});

test("an IdP that accepts and never answers fails the act closed at 15 s", async () => {
  const { pass } = await agent(idp, "reader-silent", [["read", `db/${DATABASE}/c/notes`]]);
  const client = await served.connect(pass);
  await client.get("notes", "pub/a");
  const address = new URL(idp.issuer);
  await idp.stop();
  const silent = createServer(() => {});
  await new Promise<void>((resolve) =>
    silent.listen(Number(address.port), address.hostname, resolve),
  );
  try {
    const error = await refusal(client.get("notes", "pub/a"));
    assert.equal(error.code, "idp_unavailable");
    assert.match(error.message, /timeout/);
  } finally {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
    await idp.start();
  }
});

test("an IdP whose listener never completes a connection fails the act closed at 5 s", async () => {
  const { pass } = await agent(idp, "reader-stuck", [["read", `db/${DATABASE}/c/notes`]]);
  const client = await served.connect(pass);
  const address = new URL(idp.issuer);
  await idp.stop();
  const child = spawn(
    process.execPath,
    [
      "-e",
      `const s=require("net").createServer();s.listen({port:${address.port},host:"${address.hostname}",backlog:1},()=>{console.log("up");Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0);});`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise((resolve) => child.stdout.once("data", resolve));
  const { connect } = await import("node:net");
  const fillers = [0, 1].map(() => connect(Number(address.port), address.hostname));
  await Promise.all(fillers.map((s) => new Promise((r) => s.once("connect", r))));
  try {
    const error = await refusal(client.get("notes", "pub/a"));
    assert.equal(error.code, "idp_unavailable");
    assert.match(error.message, /connect_timeout/);
  } finally {
    for (const s of fillers) s.destroy();
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    await idp.start();
  }
});

test("grants are asked each time: a revoked grant denies the next act", async () => {
  const { pass } = await agent(idp, "reader-revoked", [["read", `db/${DATABASE}/c/notes`]]);
  const client = await served.connect(pass);
  await client.get("notes", "pub/a");
  const { revoke } = await import("./support.ts");
  revoke(idp, "client:reader-revoked", "read", `db/${DATABASE}/c/notes`);
  assert.equal((await refusal(client.get("notes", "pub/a"))).code, "permission_denied");
  grant(idp, "client:reader-revoked", "read", `db/${DATABASE}/c/notes`);
  await client.get("notes", "pub/a");
});

test("with idp, a commit's default author is the pass's subject, not the client name", async () => {
  const { pass } = await agent(idp, "author-7", [["write", `db/${DATABASE}/c/notes/b/dev`]]);
  const client = await served.connect(pass);
  const receipt = (await client.call("document.put", {
    collection: "notes",
    branch: "dev",
    key: "signed",
    value: 1,
    message: "by my pass",
  })) as { author: string; message: string };
  assert.equal(receipt.author, "author-7");
  assert.equal(receipt.message, "by my pass");
});
