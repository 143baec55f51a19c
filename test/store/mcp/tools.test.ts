// The tool list follows the verbs a store names at hello: `query_run` only from a store whose
// query service runs (a real store and the shipped query worker), never from one without.

import assert from "node:assert/strict";
import { test } from "node:test";
import { StoreClient } from "../../../src/store/client/client.ts";
import { offeredTools, TOOLS } from "../../../src/store/mcp/tools.ts";
import { servedQueries } from "../query/fixture.ts";
import { servedStore } from "../transport/fixture.ts";

async function toolsOf(socketPath: string): Promise<string[]> {
  const client = await StoreClient.connect(socketPath, { verbs: true });
  await client.close();
  return offeredTools(client.hello?.verbs ?? []).map((t) => t.name);
}

test("a store with queries offers query_run; one without does not", async () => {
  const withQueries = await servedQueries();
  const plain = await servedStore();
  assert.ok((await toolsOf(withQueries.socketPath)).includes("query_run"));
  const without = await toolsOf(plain.socketPath);
  assert.ok(!without.includes("query_run"));
  assert.ok(without.includes("document_append_prune"));
  for (const tool of [
    "branches_merge",
    "branches_revert",
    "tags_create",
    "tags_list",
    "tags_delete",
  ]) {
    assert.ok(without.includes(tool), tool);
  }
});

test("every tool names a distinct, client-safe name and an object schema", () => {
  const names = new Set<string>();
  for (const tool of TOOLS) {
    assert.match(tool.name, /^[a-z_]{1,64}$/, "names clients accept (letters and _ only)");
    assert.ok(!names.has(tool.name), tool.name);
    names.add(tool.name);
    assert.equal(tool.inputSchema.type, "object");
    assert.equal(tool.outputSchema.type, "object");
  }
});
