// A ref reads the branch it names (issue #30, item 1): a pass with write on `pub` only must not
// reach `secret` through any verb that takes a ref, a tag or a version. Replayed first as
// reported (a revert of `secret@N` on `pub`, dry run and for real), then every such verb
// over the socket, then the act table itself for every ref field of every verb's decoder.

import assert from "node:assert/strict";
import { test } from "node:test";
import { schemaOf } from "../../../src/common/decode/decoder.ts";
import { ACTS, type ActArgs, READ_ACTION, type Resource } from "../../../src/store/idp/acts.ts";
import { ref, requests } from "../../../src/store/transport/requests.ts";
import { agent, DATABASE, idpStore, refusal, runIdp } from "./support.ts";

const idp = await runIdp();
const served = await idpStore(idp, { placement: true });
const admin = await agent(idp, "admin-refs", [["admin", `db/${DATABASE}`]]);
const owner = await served.connect(admin.pass);
await owner.call("collections.create", { collection: "docs" });
await owner.put("docs", [{ key: "k", value: "base" }]);
await owner.call("branches.create", { collection: "docs", branch: "pub" });
await owner.call("branches.create", { collection: "docs", branch: "secret" });
await owner.put("docs", [{ key: "k", value: "pub-edit" }], { branch: "pub" });
// The version the attacker names: `k` changed to a value only `secret` holds.
const secretVersion = (
  await owner.put(
    "docs",
    [
      { key: "k", value: "SECRET-VALUE" },
      { key: "payroll", value: "SECRET-PAYROLL" },
    ],
    { branch: "secret" },
  )
).version;
await owner.call("tags.create", { collection: "docs", tag: "t-secret", branch: "secret" });
const at = `secret@${secretVersion}`;
const attacker = await agent(idp, "pub-writer", [["write", `db/${DATABASE}/c/docs/b/pub`]]);
const client = await served.connect(attacker.pass);

test("the reported attack: a revert of secret@N on pub, dry run or not, is refused and writes nothing", async () => {
  const pubBefore = await owner.call("history.list", { collection: "docs", branch: "pub" });
  for (const version of [at, "t-secret"]) {
    for (const dry_run of [true, false]) {
      const args = { collection: "docs", branch: "pub", version, dry_run, strategy: "ours" };
      const error = await refusal(client.call("branches.revert", args));
      assert.equal(error.code, "permission_denied", JSON.stringify(args));
      assert.doesNotMatch(error.message, /SECRET/);
    }
  }
  assert.deepEqual(
    await owner.call("history.list", { collection: "docs", branch: "pub" }),
    pubBefore,
  );
  assert.equal((await owner.get("docs", "k", { branch: "pub" })).value, "pub-edit");
  // The control: a ref into pub itself is the pass's own branch.
  const own = (await client.call("branches.revert", {
    collection: "docs",
    branch: "pub",
    version: "pub",
    dry_run: true,
  })) as { outcome: string };
  assert.ok(typeof own.outcome === "string");
});

// Every verb that takes a ref, with one into `secret` (a BRANCH@VERSION, a branch, a tag).
// Verbs whose service this store does not run (query, embedding, search) are decided before
// they run: an allowed act would be refused `query_disabled` or `embed_disabled` instead.
const throughRefs: [verb: string, args: Record<string, unknown>][] = [
  ["branches.revert", { branch: "pub", version: at, dry_run: true }],
  ["branches.merge", { from: at, into: "pub", dry_run: true }],
  ["branches.merge", { from: "secret", into: "pub", dry_run: true }],
  ["branches.merge", { from: "t-secret", into: "pub", dry_run: true }],
  ["changes.list", { branch: "pub", from: at }],
  ["changes.list", { branch: "pub", from: "pub", to: "t-secret" }],
  ["changes.list", { branch: "pub", from_branch: "secret", from: secretVersion }],
  ["history.list", { branch: "pub", before: at }],
  ["document.get", { branch: "pub", key: "k", version: at }],
  ["document.get", { branch: "pub", key: "k", version: "t-secret" }],
  ["document.list", { branch: "pub", version: at }],
  ["document.list", { branch: "pub", version: "secret" }],
  ["tags.create", { tag: "mine", branch: "pub", version: at }],
  ["query.run", { branch: "pub", version: at, code: "record" }],
  ["embed.vectors", { branch: "pub", version: at, keys: ["k"] }],
  ["search.text", { branch: "pub", version: at, field: "body", text: "payroll" }],
];

test("every verb that takes a ref is refused a ref into a branch the pass may not read", async () => {
  for (const [verb, args] of throughRefs) {
    const what = `${verb} ${JSON.stringify(args)}`;
    const error = await refusal(client.call(verb, { collection: "docs", ...args }));
    assert.equal(error.code, "permission_denied", `${what}: ${error.code} ${error.message}`);
  }
  // Controls: the same verbs with the ref on pub are decided on pub, and allowed.
  const own: [string, Record<string, unknown>, string?][] = [
    ["changes.list", { branch: "pub", from: "pub" }],
    ["document.get", { branch: "pub", key: "k", version: "pub" }],
    ["document.list", { branch: "pub", version: "pub" }],
    ["query.run", { branch: "pub", version: "pub", code: "record" }, "query_disabled"],
    ["search.text", { branch: "pub", field: "body", text: "x" }, "embed_disabled"],
  ];
  for (const [verb, args, code] of own) {
    const call = client.call(verb, { collection: "docs", ...args });
    if (code === undefined) await assert.doesNotReject(call, verb);
    else assert.equal((await refusal(call)).code, code, verb);
  }
});

/** Every (verb, field) whose decoder takes a ref, found from the decoders' schemas. */
function refFields(): [string, string][] {
  const refSchema = JSON.stringify(schemaOf(ref));
  const found: [string, string][] = [];
  for (const [verb, decoder] of Object.entries(requests)) {
    const properties = (decoder.schema as { properties: Record<string, unknown> }).properties;
    for (const [field, schema] of Object.entries(properties)) {
      if (JSON.stringify(schema) === refSchema) found.push([verb, field]);
    }
  }
  return found;
}

/** The branches an act decides on before the verb runs (own resources, reads, scope). */
function decidedBranches(verb: string, args: ActArgs): string[] {
  const act = ACTS[verb]!;
  const own: Resource[] =
    act.kind === "one"
      ? [act.resource("db", args)]
      : act.kind === "each"
        ? act.resources("db", args)
        : (act.scope?.("db", args) ?? []);
  return [...own.map((r) => r.properties?.branch ?? ""), ...(act.reads?.(args) ?? [])];
}

test("the act table decides the branch of every ref field of every verb", () => {
  const fields = refFields();
  // The decoders' ref fields, so a verb given a ref later shows up here.
  assert.ok(fields.length >= 12, JSON.stringify(fields));
  for (const [verb, field] of fields) {
    const args: ActArgs = {
      collection: "docs",
      branch: "pub",
      into: "pub",
      from_branch: "pub",
      key: "k",
      keys: ["k"],
      [field]: "secret@3",
    };
    assert.ok(
      decidedBranches(verb, args).includes("secret"),
      `${verb}.${field}: decided on ${decidedBranches(verb, args)}`,
    );
  }
  // The read a writing verb's ref needs is a read, not the verb's own (write) action.
  assert.equal(READ_ACTION, "document.list");
  assert.deepEqual(
    ACTS["branches.create"]!.reads?.({ collection: "docs", from_branch: "secret" }),
    ["secret"],
  );
});
