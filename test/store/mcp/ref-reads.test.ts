// The reported ref attack through MCP (issue #30, item 1): an agent whose pass writes `pub`
// only calls the `branches_revert` tool of a real `mcp-http` with a version of `secret`; the
// store refuses it (the tool's error carries `permission_denied`), shows none of `secret`'s
// values, and writes nothing into `pub`.

import assert from "node:assert/strict";
import { test } from "node:test";
import { StoreClient } from "../../../src/store/client/client.ts";
import { agent, DATABASE, mcpWorld, sdkClient } from "./fixture.ts";

type ToolText = { content: { type: string; text: string }[]; isError?: boolean };

const world = await mcpWorld({ placement: true });
const server = await world.mcp({ listen: "127.0.0.1:0", allowed_origins: [] });
const admin = await agent(world.idp, "mcp-admin", [["admin", `db/${DATABASE}`]]);
const owner = await StoreClient.connect(world.socketPath, { pass: admin.pass });
await owner.call("collections.create", { collection: "docs" });
await owner.put("docs", [{ key: "k", value: "base" }]);
await owner.call("branches.create", { collection: "docs", branch: "pub" });
await owner.call("branches.create", { collection: "docs", branch: "secret" });
await owner.put("docs", [{ key: "k", value: "pub-edit" }], { branch: "pub" });
const secret = await owner.put("docs", [{ key: "k", value: "SECRET-VALUE" }], {
  branch: "secret",
});
const pubHistory = await owner.call("history.list", { collection: "docs", branch: "pub" });
const writer = await agent(world.idp, "mcp-pub-writer", [["write", `db/${DATABASE}/c/docs/b/pub`]]);

test("branches_revert with a version of a branch the pass may not read is refused", async () => {
  const client = await sdkClient(server.url, writer.pass);
  for (const dry_run of [true, false]) {
    const answer = (await client.callTool({
      name: "branches_revert",
      arguments: {
        collection: "docs",
        branch: "pub",
        version: `secret@${secret.version}`,
        strategy: "theirs",
        dry_run,
      },
    })) as ToolText;
    assert.equal(answer.isError, true, JSON.stringify(answer));
    assert.equal(JSON.parse(answer.content[0]!.text).error.code, "permission_denied");
    assert.doesNotMatch(JSON.stringify(answer), /SECRET/);
  }
  await client.close();
  assert.deepEqual(
    await owner.call("history.list", { collection: "docs", branch: "pub" }),
    pubHistory,
  );
  assert.equal((await owner.get("docs", "k", { branch: "pub" })).value, "pub-edit");
  await owner.close();
});
