// Without `idp` nothing changes: no pass is needed, a pass sent anyway is ignored, and pages
// carry no `denied` count.

import assert from "node:assert/strict";
import { test } from "node:test";
import { servedStore } from "../transport/fixture.ts";

test("without idp: hello needs no pass, ignores one, and pages have no denied count", async () => {
  const served = await servedStore();
  const plain = await served.connect();
  await plain.call("collections.create", { collection: "c" });
  await plain.put("c", [{ key: "k", value: 1 }]);
  const withPass = await served.connect({ pass: "whatever" });
  const page = (await withPass.call("document.list", { collection: "c" })) as object;
  assert.deepEqual(Object.keys(page).sort(), ["next", "rows", "version"]);
  assert.equal((await withPass.get("c", "k")).value, 1);
});
