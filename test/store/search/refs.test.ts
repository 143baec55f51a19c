/**
 * search.text and embed.vectors take a named ref wherever they take a version (issue 23): a
 * branch name reads its head, BRANCH@VERSION a version of that branch, a tag the version
 * it names. Each answer equals the same read named by branch and number, through the
 * socket with the real embedding worker.
 */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { embedGroup, refusalOf, type Served, serve, settled, testModel } from "./fixture.ts";

const C = "refs";
const KEYS = ["a", "b", "c", "d", "new"];
const QUESTION = "vector search model";

describe("named refs in search.text and embed.vectors", () => {
  let served: Served;
  let client: StoreClient;
  let tagged: number;
  let sideHead: number;
  before(async () => {
    served = await serve(embedGroup(await testModel()));
    client = await served.client();
    await client.call("collections.create", { collection: C });
    await client.put(C, [
      { key: "a", value: { body: "vector search model" } },
      { key: "b", value: { body: "the store branch version" } },
      { key: "c", value: { body: "people work world" } },
      { key: "d", value: { body: "vector model text" } },
    ]);
    await client.embedEnable(C, "$.body");
    await settled(client, C);
    tagged = (await client.search(C, "$.body", QUESTION)).version;
    await client.call("tags.create", { collection: C, tag: "reviewed" });
    await client.call("branches.create", { collection: C, branch: "side" });
    sideHead = (
      await client.put(C, [{ key: "new", value: { body: "vector search model text" } }], {
        branch: "side",
      })
    ).version;
    await client.call("document.delete", { collection: C, keys: ["a"] });
    await settled(client, C);
  });
  after(() => served.stop());

  const keysOf = (answer: { rows: { key: string }[] }) => answer.rows.map((r) => r.key);

  test("search.text: a branch name, BRANCH@VERSION and a tag read what branch and number read", async () => {
    const search = (options: { branch?: string; version?: number | string }) =>
      client.search(C, "$.body", QUESTION, { mode: "vector", k: 5, ...options });
    const side = await search({ branch: "side" });
    assert.ok(keysOf(side).includes("new") && keysOf(side).includes("a"));
    for (const ref of ["side", `side@${sideHead}`]) {
      const named = await search({ version: ref });
      assert.deepEqual(keysOf(named), keysOf(side), ref);
      assert.equal(named.version, sideHead, ref);
    }
    const then = await search({ version: tagged });
    const byTag = await search({ version: "reviewed" });
    assert.deepEqual(keysOf(byTag), keysOf(then));
    assert.equal(byTag.version, tagged);
    assert.ok(keysOf(byTag).includes("a") && !keysOf(byTag).includes("new"));
    // main's head, named: `a` was deleted there since the tag.
    assert.ok(!keysOf(await search({ version: "main" })).includes("a"));
    assert.equal(await refusalOf(search({ version: "nope" })), "ref_not_found");
  });

  test("embed.vectors: the same refs name the same vectors", async () => {
    const side = await client.embedVectors(C, KEYS, { branch: "side" });
    assert.notEqual(side.vectors.new, null);
    for (const ref of ["side", `side@${sideHead}`]) {
      assert.deepEqual(await client.embedVectors(C, KEYS, { version: ref }), side, ref);
    }
    const byTag = await client.embedVectors(C, KEYS, { version: "reviewed" });
    assert.deepEqual(byTag, await client.embedVectors(C, KEYS, { version: tagged }));
    assert.equal(byTag.version, tagged);
    assert.equal(byTag.vectors.new, null, "no record `new` at the tag");
    assert.notEqual(byTag.vectors.a, null);
    assert.equal((await client.embedVectors(C, KEYS, { version: "main" })).vectors.a, null);
  });
});
