// A pass that expires mid-attempt is renewed: skein-idp issues two-second passes, an agent
// writes through mcp-http, then (held by an approval gate) writes again once its first pass
// is past its `exp` and the store's clock tolerance, which the store would refuse.

import assert from "node:assert/strict";
import { test } from "node:test";
import { PASS_CLOCK_TOLERANCE_S } from "../../../../src/store/idp/passes.ts";
import { until } from "../../../support/until.ts";
import { agentFlow, storeWorld } from "./store-world.ts";

const TTL_S = 2;
const w = await storeWorld({ idpArgs: ["--pass-ttl", String(TTL_S)] });
await w.operator("collections.create", { collection: "notes" });
const auth = await w.agentClient("agent-1", [["admin", `db/${w.db}`]]);
const store = {
  url: w.mcp.url.href,
  auth,
  tools: ["document_put"],
  approval: ["document_put"],
  branch: "'agent-' & workflow_id",
};
await w.worker({
  gated: { agent: { base_url: w.model.url, model: "scripted", mcp: { store } } },
});
await w.define(agentFlow("gated_write", "gated"));

const put = (id: string, key: string) => ({
  id,
  name: "store_document_put",
  arguments: JSON.stringify({ collection: "notes", key, value: key }),
});

test("a pass that expires mid-attempt is renewed before the next call", async () => {
  w.model.push(
    { tool_calls: [put("p1", "early")] },
    { tool_calls: [put("p2", "late")] },
    {
      content: "done",
    },
  );
  const id = await w.start("gated_write", { task: "renew" });
  const a = await w.live(id);
  const approve = async (callId: string) => {
    const pendingAt = await until("the approval", async () =>
      (await w.transcript(id, a)).some(
        (e) => e.type === "approval" && e.call_id === callId && e.state === "pending",
      )
        ? Date.now()
        : undefined,
    );
    return {
      pendingAt,
      outcome: await w.intervene(id, a, {
        kind: "RespondToApproval",
        call_id: callId,
        decision: { decision: "Approve" },
        note: null,
      }),
    };
  };
  const first = await approve("p1");
  // The attempt's first pass was issued before its first call waited, so by now it is past
  // its exp and the store's tolerance.
  const expired = first.pendingAt + (TTL_S + PASS_CLOCK_TOLERANCE_S + 1) * 1000;
  const second = await until("the second call to wait", async () => {
    const entries = await w.transcript(id, a);
    return entries.some((e) => e.type === "approval" && e.call_id === "p2") || undefined;
  });
  assert.ok(second);
  await until("the first pass to expire", () => Date.now() > expired, { timeoutMs: 60_000 });
  assert.equal((await approve("p2")).outcome, "Applied");
  const run = await w.ended(id);
  assert.equal(run.status, "Completed", JSON.stringify(run));
  const results = (await w.transcript(id, a)).filter((e) => e.type === "tool_result");
  assert.deepEqual(
    results.map((e) => e.is_error),
    [false, false],
    JSON.stringify(results),
  );
  assert.equal(await w.read("notes", `agent-${id}`, "late"), "late");
});
