/**
 * The decision rule as a table (docs/identity.md, "The model"), asked over real HTTP of a
 * real skein-idp process with the store's app token: levels, each resource level, groups,
 * key prefixes, unplaced collections and branches, unknown actions, subjects and resource
 * types; then placement removal and revoke, made while the server runs.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { VERBS } from "../../src/store/transport/verbs.ts";
import { accessToken, idpHome, postJson, resources as r, startIdp } from "./fixture.ts";

const { database: db, collection: col, branch: br, record: rec } = r;

type Row = [subject: string, action: string, resource: object, expected: boolean];

const user = (id: string) => ({ type: "user", id });
const client = (id: string) => ({ type: "client", id });

function subjectOf(text: string) {
  const [type, id] = text.split(":") as [string, string];
  return { type, id };
}

const TABLE: Row[] = [
  // A read grant on the database: everything in it, placed or not; read only.
  ["user:alice", "document.get", rec("shop", "notes", "main", "k"), true],
  ["user:alice", "document.list", br("shop", "notes", "main"), true],
  ["user:alice", "collections.list", db("shop"), true],
  ["user:alice", "store.stats", db("shop"), true],
  ["user:alice", "document.get", rec("shop", "loose", "main", "k"), true],
  ["user:alice", "document.put", rec("shop", "notes", "main", "k"), false],
  ["user:alice", "collections.create", db("shop"), false],
  // Write on a collection: its branches and records (write implies read), not above it.
  ["user:bob", "document.put", rec("shop", "notes", "main", "k"), true],
  ["user:bob", "document.delete", rec("shop", "notes", "dev", "k"), true],
  ["user:bob", "document.get", rec("shop", "notes", "dev", "k"), true],
  ["user:bob", "branches.list", col("shop", "notes"), true],
  ["user:bob", "branches.create", col("shop", "notes"), false],
  ["user:bob", "collections.list", db("shop"), false],
  ["user:bob", "document.get", rec("shop", "loose", "main", "k"), false],
  // ... and only placed branches of the collection.
  ["user:bob", "document.get", br("shop", "notes", "ghost"), false],
  ["user:bob", "document.get", rec("shop", "notes", "ghost", "k"), false],
  // Admin on a branch: that branch and its records, nothing beside or above.
  ["user:carol", "branches.delete", br("shop", "notes", "dev"), true],
  ["user:carol", "history.release", br("shop", "notes", "dev"), true],
  ["user:carol", "document.put", rec("shop", "notes", "dev", "k"), true],
  ["user:carol", "document.get", rec("shop", "notes", "main", "k"), false],
  ["user:carol", "branches.list", col("shop", "notes"), false],
  // A key prefix: records of that branch whose key starts with it, nothing else.
  ["user:dave", "document.get", rec("shop", "notes", "main", "pub/a"), true],
  ["user:dave", "document.get", rec("shop", "notes", "main", "pub/"), true],
  ["user:dave", "document.get", rec("shop", "notes", "main", "private"), false],
  ["user:dave", "document.get", rec("shop", "notes", "main", "pu"), false],
  ["user:dave", "document.put", rec("shop", "notes", "main", "pub/a"), false],
  ["user:dave", "document.list", br("shop", "notes", "main"), false],
  ["user:dave", "document.get", rec("shop", "notes", "dev", "pub/a"), false],
  // An empty prefix is the whole branch's records.
  ["user:gina", "document.get", rec("shop", "notes", "main", "anything"), true],
  ["user:gina", "document.list", br("shop", "notes", "main"), false],
  // Groups: a member has the group's grants.
  ["user:erin", "document.get", rec("shop", "notes", "main", "k"), true],
  ["user:erin", "document.put", rec("shop", "notes", "main", "k"), false],
  ["client:agent", "document.get", rec("shop", "loose", "x", "k"), false],
  ["client:robot", "changes.list", br("shop", "notes", "main"), true],
  // Clients are subjects of their own type.
  ["client:agent", "document.put", rec("shop", "notes", "main", "k"), true],
  ["user:agent", "document.put", rec("shop", "notes", "main", "k"), false],
  // A branch pattern: every placed branch whose name starts with it, and making one (asked on
  // the new branch, decided as if placed); nothing beside or above (main is read only here).
  ["user:hana", "document.put", rec("shop", "notes", "agent-7", "k"), true],
  ["user:hana", "document.list", br("shop", "notes", "agent-7"), true],
  ["user:hana", "document.put", rec("shop", "notes", "agent-8", "k"), false],
  ["user:hana", "branches.create", br("shop", "notes", "agent-9"), true],
  ["user:hana", "branches.create", br("shop", "notes", "feature"), false],
  ["user:hana", "branches.create", col("shop", "notes"), false],
  ["user:hana", "document.put", rec("shop", "notes", "main", "k"), false],
  ["user:hana", "document.get", rec("shop", "notes", "main", "k"), true],
  ["user:hana", "document.put", rec("shop", "notes", "agent-", "k"), false],
  // Making a branch needs admin that will cover it: an exact branch grant does, write does not.
  ["user:carol", "branches.create", br("shop", "notes", "dev"), true],
  ["user:carol", "branches.create", br("shop", "notes", "dev2"), false],
  ["user:bob", "branches.create", br("shop", "notes", "fresh"), false],
  // Nobody else, nothing else.
  ["user:frank", "document.get", rec("shop", "notes", "main", "k"), false],
  ["user:nobody", "document.get", rec("shop", "notes", "main", "k"), false],
  ["user:eve", "document.get", rec("shop", "notes", "main", "k"), false],
  ["user:alice", "document.teleport", rec("shop", "notes", "main", "k"), false],
  ["user:alice", "document.get", { type: "service.other", id: "x" }, false],
  ["robot:alice", "document.get", rec("shop", "notes", "main", "k"), false],
];

describe("the decision rule (real skein-idp, real HTTP)", async () => {
  const home = await idpHome();
  let issuer = "";
  let app = "";

  const ask = async (subject: object, action: string, resource: object) => {
    const answer = await postJson(`${issuer}/access/v1/evaluation`, app, {
      subject,
      action: { name: action },
      resource,
      context: { anything: ["goes", 1] },
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.decision;
  };

  const place = async (method: string, path: string) => {
    const response = await fetch(`${issuer}/placement/v1/databases/shop/${path}`, {
      method,
      headers: { authorization: `Bearer ${app}` },
    });
    assert.equal(response.status, 200);
    return response.json();
  };

  {
    const appSecret = await home.client("app", "--app", "shop");
    await home.client("agent");
    await home.client("robot");
    for (const name of ["alice", "bob", "carol", "dave", "erin", "frank", "gina", "eve", "hana"]) {
      await home.user(name, `${name}-password`);
    }
    await home.run("group", "add", "readers");
    await home.run("group", "member", "readers", "erin");
    await home.run("group", "add", "bots");
    await home.run("group", "member", "bots", "client:robot");
    await home.grant("user:alice", "read", "db/shop");
    await home.grant("user:bob", "write", "db/shop/c/notes");
    await home.grant("user:carol", "admin", "db/shop/c/notes/b/dev");
    await home.grant("user:dave", "read", "db/shop/c/notes/b/main/p/pub/");
    await home.grant("user:gina", "read", "db/shop/c/notes/b/main/p/");
    await home.grant("group:readers", "read", "db/shop/c/notes");
    await home.grant("group:bots", "read", "db/shop/c/notes/b/main");
    await home.grant("client:agent", "write", "db/shop/c/notes/b/main");
    await home.grant("user:eve", "admin", "db/other");
    await home.grant("user:hana", "admin", "db/shop/c/notes/b/agent-*");
    await home.grant("user:hana", "read", "db/shop/c/notes/b/main");
    const idp = await startIdp(home.dataDir);
    issuer = idp.issuer;
    app = await accessToken(issuer, "app", appSecret, "shop");
    await place("PUT", "collections/notes");
    await place("PUT", "collections/notes/branches/main");
    await place("PUT", "collections/notes/branches/dev");
    await place("PUT", "collections/notes/branches/agent-7");
  }

  test("every row of the table", async () => {
    for (const [subject, action, resource, expected] of TABLE) {
      const decision = await ask(subjectOf(subject), action, resource);
      assert.equal(decision, expected, `${subject} ${action} ${JSON.stringify(resource)}`);
    }
  });

  test("every verb of the store has its level", async () => {
    const levels: Record<string, string[]> = {
      read: [
        "collections.list",
        "branches.list",
        "document.get",
        "document.list",
        "history.list",
        "changes.list",
        "query.run",
        "search.text",
        "store.stats",
        "embed.texts",
        "embed.status",
        "embed.vectors",
        "tags.list",
      ],
      write: [
        "document.put",
        "document.delete",
        "document.append_prune",
        "branches.merge",
        "branches.revert",
        "tags.create",
      ],
      admin: [
        "collections.create",
        "collections.delete",
        "branches.create",
        "branches.delete",
        "history.release",
        "embed.enable",
        "tags.delete",
        "store.backup",
      ],
    };
    // Every verb the store serves has its level here (a verb without one is always denied).
    const listed = Object.values(levels).flat();
    for (const verb of VERBS) assert.ok(listed.includes(verb), `${verb} has a level`);
    // carol has admin on notes/dev, so every verb is allowed there; bob (write on notes)
    // has exactly read and write; alice (read on shop) exactly read.
    const who: Record<string, string> = { read: "alice", write: "bob", admin: "carol" };
    const order = ["read", "write", "admin"];
    for (const [level, verbs] of Object.entries(levels)) {
      for (const verb of verbs) {
        for (const holder of order) {
          const expected = order.indexOf(holder) >= order.indexOf(level);
          const decision = await ask(user(who[holder]!), verb, br("shop", "notes", "dev"));
          assert.equal(decision, expected, `${who[holder]} (${holder}) ${verb}`);
        }
      }
    }
  });

  test("removing a placement closes what collection and branch grants covered", async () => {
    assert.equal(await ask(user("carol"), "document.put", rec("shop", "notes", "dev", "k")), true);
    assert.deepEqual(await place("DELETE", "collections/notes/branches/dev"), { removed: true });
    assert.equal(await ask(user("carol"), "document.put", rec("shop", "notes", "dev", "k")), false);
    assert.equal(await ask(user("bob"), "document.put", rec("shop", "notes", "dev", "k")), false);
    assert.equal(await ask(user("bob"), "document.put", rec("shop", "notes", "main", "k")), true);
    // The database grant does not depend on placement.
    assert.equal(await ask(user("alice"), "document.get", rec("shop", "notes", "dev", "k")), true);
    assert.deepEqual(await place("PUT", "collections/notes/branches/dev"), {
      placed: true,
      created: true,
    });
    assert.equal(await ask(user("carol"), "document.put", rec("shop", "notes", "dev", "k")), true);
  });

  test("a revoke from the CLI is seen by the running server's next evaluation", async () => {
    assert.equal(await ask(user("erin"), "document.get", rec("shop", "notes", "main", "k")), true);
    await home.revoke("group:readers", "read", "db/shop/c/notes");
    assert.equal(await ask(user("erin"), "document.get", rec("shop", "notes", "main", "k")), false);
    assert.equal(
      await ask(client("agent"), "document.put", rec("shop", "notes", "main", "k")),
      true,
    );
    await home.revoke("client:agent", "write", "db/shop/c/notes/b/main");
    assert.equal(
      await ask(client("agent"), "document.put", rec("shop", "notes", "main", "k")),
      false,
    );
  });
});
