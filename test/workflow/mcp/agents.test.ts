// Steering an agent attempt through the MCP endpoint: a run started through MCP starts an
// agent attempt on a real `skein worker agent` (the scripted model answers it), and another
// agent, through the SDK client, lists it with attempts_list, injects a message (Applied,
// then seen in transcript_read) and acts as the reviewer of a tool call waiting for approval.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type ScriptedModel, startScriptedModel } from "../../../src/testing/scripted-model.ts";
import { until } from "../../support/until.ts";
import type { spawnWorker } from "../../support/worker-endpoint.ts";
import { spawnAgentWorker } from "../agents/support.ts";
import { call, serveForSuite, tokenFor } from "../support/server.ts";
import { mcpClient } from "./support.ts";

const ASK =
  "name: ask\ntask_queue: agents\nretry: { max_attempts: 1 }\nsteps:\n  - { id: a, call: { action: assistant, input: input.q } }\noutput: steps.a\n";
const toolCall = (id: string, name: string) => ({ id, name, arguments: "{}" });

describe("agent attempts through MCP", () => {
  const s = serveForSuite('[namespaces]\ndefault = "default"\n[mcp]\nenabled = true');
  let model: ScriptedModel;
  let worker: ReturnType<typeof spawnWorker>;
  let reviewer: Client;

  before(async () => {
    model = await startScriptedModel();
    const r = await call(s.server.url, "POST", "/workflows/definitions", {
      token: s.admin,
      body: { definition: ASK },
    });
    assert.equal(r.status, 200);
    const agent = { base_url: model.url, model: "scripted", max_turns: 5 };
    worker = await spawnAgentWorker({
      dir: s.dir.path,
      endpoint: s.server.grpc!,
      token: await tokenFor(s.dir.path, { subject: "w", namespaces: "*", worker: true }),
      actions: {
        assistant: { agent },
        lookup: {
          description: "looks things up",
          approval: "required",
          exec: {
            command: [process.execPath, "-e", "process.stdout.write(JSON.stringify('found'))"],
          },
        },
      },
    });
    reviewer = await mcpClient(
      s.server.url,
      await tokenFor(s.dir.path, { subject: "reviewer-agent", namespaces: ["default"] }),
    );
  });
  after(async () => {
    await reviewer?.close();
    worker?.kill();
    await model?.close();
  });

  // biome-ignore lint/suspicious/noExplicitAny: structured answers are read field by field
  async function tool(name: string, args: object): Promise<any> {
    const r = await reviewer.callTool({ name, arguments: args as Record<string, unknown> });
    assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  }

  /**
   * The run's agent attempt once the worker has announced it over the agent transport (a
   * gRPC-held attempt is listed with ["Cancel"] only until then), and `where` holds of it.
   */
  const liveAttempt = (
    workflowId: string,
    where: (a: { pending_approvals: unknown[] }) => boolean = () => true,
  ) =>
    until(`a live agent attempt of ${workflowId}`, async () => {
      const { attempts } = await tool("attempts_list", { workflow_id: workflowId });
      return attempts.find(
        (a: { capabilities: string[]; pending_approvals: unknown[] }) =>
          a.capabilities.includes("InjectMessage") && where(a),
      );
    });

  test("InjectMessage is Applied and seen in the transcript", async () => {
    model.push(
      { tool_calls: [toolCall("c1", "lookup-missing")], delay_ms: 1000 },
      { content: "ok" },
    );
    const started = await tool("workflow_start", { name: "ask", input: { q: "hello" } });
    const id = started.workflow_id;
    const a = await liveAttempt(id);
    const text = "also mention the weather";
    const injected = await tool("intervene", {
      workflow_id: id,
      run_id: a.run_id,
      activity_id: a.activity_id,
      attempt: a.attempt,
      kind: { kind: "InjectMessage", text, priority: { priority: "Normal" } },
    });
    assert.deepEqual(injected, { outcome: { outcome: "Applied" } });
    const ended = await tool("workflow_describe", { workflow_id: id, wait_ms: 60000 });
    assert.equal(ended.run.status, "Completed");
    const ref = {
      workflow_id: id,
      run_id: a.run_id,
      activity_id: a.activity_id,
      attempt: a.attempt,
    };
    const page = await tool("transcript_read", ref);
    assert.ok(
      page.entries.some(
        (e: { type: string; text?: string; source?: string }) =>
          e.type === "user_turn" && e.source === "intervention" && e.text === text,
      ),
      JSON.stringify(page.entries),
    );
    const control = page.entries.find((e: { type: string }) => e.type === "control");
    assert.equal(
      control.control.subject,
      "reviewer-agent",
      "stamped with the MCP caller's subject",
    );
    const first = await tool("transcript_read", { ...ref, limit: 1 });
    assert.deepEqual([first.entries.length, first.next], [1, 1]);
  });

  test("a pending approval is listed and answered by the reviewer agent", async () => {
    model.push({ tool_calls: [toolCall("needs-ok", "lookup")] }, { content: "fine" });
    const { workflow_id: id } = await tool("workflow_start", { name: "ask", input: { q: "look" } });
    const a = await liveAttempt(id, (x) => x.pending_approvals.length > 0);
    assert.deepEqual(a.pending_approvals, [
      { call_id: "needs-ok", tool: "lookup", arguments: "{}" },
    ]);
    const answered = await tool("intervene", {
      workflow_id: id,
      run_id: a.run_id,
      activity_id: a.activity_id,
      attempt: a.attempt,
      kind: {
        kind: "RespondToApproval",
        call_id: "needs-ok",
        decision: { decision: "Approve" },
        note: null,
      },
    });
    assert.deepEqual(answered, { outcome: { outcome: "Applied" } });
    const ended = await tool("workflow_describe", { workflow_id: id, wait_ms: 60000 });
    assert.deepEqual([ended.run.status, ended.run.output], ["Completed", "fine"]);
  });

  test("StaleTarget and CapabilityNotSupported are outcomes, not errors", async () => {
    const { workflow_id: id, run_id } = await tool("workflow_start", {
      name: "ask",
      input: { q: "quick" },
      wait_ms: 0,
    });
    model.push({ content: "quick" });
    await tool("workflow_describe", { workflow_id: id, wait_ms: 60000 });
    const stale = await tool("intervene", {
      workflow_id: id,
      run_id,
      activity_id: 1,
      attempt: 1,
      kind: { kind: "PauseResume", paused: true },
    });
    assert.deepEqual(stale, { outcome: { outcome: "StaleTarget" } });
  });
});
