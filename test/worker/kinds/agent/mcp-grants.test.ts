// The same identity on both sides: the agent's pass comes from skein-idp by client
// credentials and the store decides each of its acts. An agent granted read on main and
// admin on the branch pattern `agent-*` makes and writes its run's branch; the same agent,
// with no pin in the worker, is refused by the store when it writes main or makes another
// branch, and may still read main (its branch holds main's records).

import assert from "node:assert/strict";
import { test } from "node:test";
import { agentFlow, storeWorld } from "./store-world.ts";

const w = await storeWorld();
await w.operator("collections.create", { collection: "notes" });
await w.operator("document.put", { collection: "notes", key: "readme", value: "main" });
const auth = await w.agentClient("scoped-agent", [
  ["read", `db/${w.db}/c/notes/b/main`],
  ["admin", `db/${w.db}/c/notes/b/agent-*`],
]);
const store = {
  url: w.mcp.url.href,
  auth,
  tools: ["document_get", "document_put", "branches_create"],
};
const agent = { base_url: w.model.url, model: "scripted" };
await w.worker({
  pinned: { agent: { ...agent, mcp: { store: { ...store, branch: "'agent-' & workflow_id" } } } },
  unpinned: { agent: { ...agent, mcp: { store } } },
});
await w.define(agentFlow("pinned_write", "pinned"), agentFlow("unpinned_write", "unpinned"));

const call = (id: string, tool: string, args: object) => ({
  id,
  name: `store_${tool}`,
  arguments: JSON.stringify({ collection: "notes", ...args }),
});

test("an agent granted its branches makes and writes its run's branch", async () => {
  w.model.push(
    { tool_calls: [call("a1", "document_put", { key: "plan", value: 1 })] },
    { content: "done" },
  );
  const id = await w.start("pinned_write", { task: "write" });
  assert.equal((await w.ended(id)).status, "Completed");
  assert.equal(await w.read("notes", `agent-${id}`, "plan"), 1);
  // Made from main: main's records are on the branch too.
  assert.equal(await w.read("notes", `agent-${id}`, "readme"), "main");
});

test("the store refuses the same agent's writes to main and other branches", async () => {
  const seen = w.model.requests.length;
  w.model.push(
    {
      tool_calls: [
        call("b1", "document_put", { branch: "main", key: "readme", value: "mine" }),
        call("b2", "branches_create", { branch: "feature" }),
        call("b3", "document_get", { branch: "main", key: "readme" }),
      ],
    },
    { content: "done" },
  );
  const id = await w.start("unpinned_write", { task: "escape" });
  assert.equal((await w.ended(id)).status, "Completed");
  const answers = w.model.requests[seen + 1]!.messages.filter((m) => m.role === "tool");
  const parsed = answers.map((m) => JSON.parse(String(m.content)));
  assert.equal(parsed[0].error.code, "permission_denied");
  assert.equal(parsed[1].error.code, "permission_denied");
  assert.deepEqual(parsed[2].value, "main");
  assert.equal(await w.read("notes", "main", "readme"), "main");
  assert.equal(await w.read("notes", "feature", "readme").catch((e) => e.code), "branch_not_found");
});
