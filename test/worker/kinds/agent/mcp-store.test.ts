// An agent in the store, end to end with real processes (skein-idp, skein-store serve with
// idp, mcp-http, skein serve, a skein worker agent, the scripted model): the model is offered
// the allowed store tools with their schemas, its calls land on the run's own branch, calls
// outside the allow-list or to another branch are answered without a request, approval
// gates hold a put until RespondToApproval, a store that stops mid-attempt is an error result
// the agent goes on from.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import type { ScriptedReply } from "../../../../src/testing/scripted-model.ts";
import { until as untilFn } from "../../../support/until.ts";
import { skein } from "../../../workflow/support/server.ts";
import { agentFlow, type StoreWorld, storeWorld } from "./store-world.ts";

const BRANCH = "'agent-' & workflow_id";

const put = (id: string, key: string, value: unknown, extra: object = {}) => ({
  id,
  name: "store_document_put",
  arguments: JSON.stringify({ collection: "notes", key, value, ...extra }),
});
const say = (content: string): ScriptedReply => ({ content });

// Top level: the world's processes are stopped by `after` hooks of the file.
const w: StoreWorld = await storeWorld();
let actions: Record<string, unknown> = {};
// Admin on the database: here the worker's pin alone keeps the agent on its branch.
const auth = await w.agentClient("agent-1", [["admin", `db/${w.db}`]]);
{
  await w.operator("collections.create", { collection: "notes" });
  await w.operator("document.put", { collection: "notes", key: "readme", value: "main" });
  const store = {
    url: w.mcp.url.href,
    auth,
    tools: ["document_get", "document_put", "document_list", "changes_list"],
    branch: BRANCH,
    door: { origin: "https://door.example", store: "shop" },
  };
  const agent = { base_url: w.model.url, model: "scripted", max_turns: 8 };
  actions = {
    writer: { agent: { ...agent, mcp: { store } } },
    gated: { agent: { ...agent, mcp: { store: { ...store, approval: ["document_put"] } } } },
  };
  await w.define(
    agentFlow("write", "writer"),
    agentFlow("gated_write", "gated"),
    agentFlow("gated_retry", "gated", 2),
  );
}
let worker = await w.worker(actions);

test("the model is offered the allowed store tools and its writes land on the run's branch", async () => {
  const seen = w.model.requests.length;
  w.model.push(
    { tool_calls: [put("c1", "plan", { steps: 2 })] },
    {
      tool_calls: [
        { id: "c2", name: "store_document_get", arguments: '{"collection":"notes","key":"plan"}' },
      ],
    },
    say("done"),
  );
  const id = await w.start("write", { task: "plan" });
  const run = await w.ended(id);
  assert.equal(run.status, "Completed", JSON.stringify(run));
  const offered = (w.model.requests[seen]!.tools ?? []) as {
    function: { name: string; parameters: { properties?: Record<string, unknown> } };
  }[];
  assert.deepEqual(offered.map((t) => t.function.name).sort(), [
    "store_changes_list",
    "store_document_get",
    "store_document_list",
    "store_document_put",
  ]);
  const putTool = offered.find((t) => t.function.name === "store_document_put")!;
  assert.ok(putTool.function.parameters.properties?.collection, "the server's own schema");
  // The get answered the model with what the put wrote, on the branch.
  const answer = w.model.requests[seen + 2]!.messages.at(-1)!;
  assert.equal(answer.role, "tool");
  assert.deepEqual(JSON.parse(answer.content as string).value, { steps: 2 });
  assert.deepEqual(await w.read("notes", `agent-${id}`, "plan"), { steps: 2 });
  assert.equal(await w.read("notes", "main", "plan"), undefined);
  const a = { run_id: run.run_id, activity_id: 1, attempt: 1 };
  const entries = await w.transcript(id, a);
  const workspace = entries.find((e) => e.type === "workspace");
  assert.deepEqual(
    { ...workspace, url: undefined },
    {
      type: "workspace",
      server: "store",
      url: undefined,
      collection: "notes",
      branch: `agent-${id}`,
      base: "main",
      created: true,
      door: { origin: "https://door.example", store: "shop" },
    },
  );
  // The run knows its branch: describe, and `skein workflow describe`.
  const described = await w.describe(id);
  assert.deepEqual(described.workspaces, [
    {
      activity_id: 1,
      attempt: 1,
      server: "store",
      url: w.mcp.url.href,
      collection: "notes",
      branch: `agent-${id}`,
      base: "main",
      review_url: `https://door.example/s/shop/c/notes/compare/main...agent-${id}`,
    },
  ]);
  const cli = skein(["workflow", "describe", id, "-s", w.server.url, "-t", w.token, "-o", "text"]);
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stdout, new RegExp(`store +notes +agent-${id} +main +https://door\\.example/`));
  const call = entries.find((e) => e.type === "tool_call" && e.call_id === "c1")!;
  assert.equal(call.server, "store");
  assert.equal(call.tool, "document_put");
  const result = entries.find((e) => e.type === "tool_result" && e.call_id === "c1")!;
  assert.equal(result.is_error, false);
  // Neither the secret nor a pass (a JWT) reaches the transcript or the worker's log.
  const secret = (await readFile(auth.client_credentials.secret_file, "utf8")).trim();
  for (const text of [JSON.stringify(entries), worker.stderr()]) {
    assert.ok(!text.includes(secret));
    assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{10,}/);
  }
});

test("a tool outside the allow-list or a call to another branch is answered without a request", async () => {
  const seen = w.model.requests.length;
  w.model.push(
    {
      tool_calls: [
        {
          id: "x1",
          name: "store_branches_delete",
          arguments: '{"collection":"notes","branch":"main"}',
        },
        put("x2", "readme", "overwritten", { branch: "main" }),
      ],
    },
    say("gave up"),
  );
  const id = await w.start("write", { task: "escape" });
  const run = await w.ended(id);
  assert.equal(run.status, "Completed");
  const answers = w.model.requests[seen + 1]!.messages.filter((m) => m.role === "tool");
  assert.match(String(answers[0]!.content), /no tool named "store_branches_delete"/);
  assert.equal(JSON.parse(String(answers[1]!.content)).error.code, "branch_refused");
  assert.equal(await w.read("notes", "main", "readme"), "main");
  // Nothing was sent for either call: the branch was never made.
  const branches = (await w.operator("branches.list", { collection: "notes" })) as {
    rows: { name: string }[];
  };
  assert.ok(!branches.rows.some((b) => b.name === `agent-${id}`));
});

for (const decision of ["Approve", "Deny"] as const) {
  test(`an approval-gated put waits for RespondToApproval (${decision})`, async () => {
    const seen = w.model.requests.length;
    w.model.push({ tool_calls: [put("g1", "gated", decision)] }, say("ok"));
    const id = await w.start("gated_write", { task: decision });
    await w.asked(seen + 1);
    const a = await w.live(id);
    await pending(id, a, "g1");
    // Waiting: nothing is written yet.
    assert.equal(await w.read("notes", `agent-${id}`, "gated").catch(() => undefined), undefined);
    const outcome = await w.intervene(id, a, {
      kind: "RespondToApproval",
      call_id: "g1",
      decision: { decision },
      note: decision === "Deny" ? "not now" : null,
    });
    assert.equal(outcome, "Applied");
    assert.equal((await w.ended(id)).status, "Completed");
    const written = await w.read("notes", `agent-${id}`, "gated").catch(() => undefined);
    assert.equal(written, decision === "Approve" ? "Approve" : undefined);
  });
}

test("the store stopped mid-attempt is an error result and the attempt goes on", async () => {
  const seen = w.model.requests.length;
  w.model.push(
    { tool_calls: [put("s1", "before", 1)] },
    { tool_calls: [put("s2", "during", 2)] },
    say("noted the outage"),
  );
  const id = await w.start("gated_write", { task: "outage" });
  await w.asked(seen + 1);
  const a = await w.live(id);
  await respond(id, a, "s1");
  await pending(id, a, "s2");
  const store = w.world.store();
  store.child.kill("SIGTERM");
  await store.exited;
  await respond(id, a, "s2");
  const run = await w.ended(id);
  await w.world.restartStore();
  assert.equal(run.status, "Completed", JSON.stringify(run));
  const answer = w.model.requests[seen + 2]!.messages.at(-1)!;
  assert.equal(answer.role, "tool");
  assert.match(String(answer.content), /"error"/);
  const result = (await w.transcript(id, a)).find(
    (e) => e.type === "tool_result" && e.call_id === "s2",
  )!;
  assert.equal(result.is_error, true);
});

test("SIGKILL of the worker mid-attempt: the retry goes on on the same branch", async () => {
  const seen = w.model.requests.length;
  w.model.push(
    { tool_calls: [put("k1", "first", 1)] },
    { tool_calls: [put("k2", "second", 2)] },
    { tool_calls: [put("k3", "third", 3)] },
    say("finished on retry"),
  );
  const id = await w.start("gated_retry", { task: "survive" });
  await w.asked(seen + 1);
  const a1 = await w.live(id);
  await respond(id, a1, "k1");
  await pending(id, a1, "k2");
  worker.kill("SIGKILL");
  await worker.exited;
  worker = await w.worker(actions);
  await w.asked(seen + 3);
  const a2 = await until(async () => {
    const a = await w.live(id);
    return a.attempt === 2 && a;
  });
  await respond(id, a2, "k3");
  const run = await w.ended(id);
  assert.equal(run.status, "Completed", JSON.stringify(run));
  const branch = `agent-${id}`;
  assert.equal(await w.read("notes", branch, "first"), 1);
  assert.equal(await w.read("notes", branch, "second"), undefined);
  assert.equal(await w.read("notes", branch, "third"), 3);
  const spaces = [
    (await w.transcript(id, a1)).find((e) => e.type === "workspace"),
    (await w.transcript(id, a2)).find((e) => e.type === "workspace"),
  ];
  // Describe names the branch once, from the latest attempt that worked on it.
  const described = await w.describe(id);
  assert.deepEqual(
    described.workspaces.map((x: { attempt: number; branch: string }) => [x.attempt, x.branch]),
    [[2, branch]],
  );
  assert.deepEqual(
    spaces.map((e) => [e?.branch, e?.created]),
    [
      [branch, true],
      [branch, false],
    ],
  );
});

type Attempt = Awaited<ReturnType<StoreWorld["live"]>>;

/** Waits until the tool call `callId` of the attempt waits for its approval. */
function pending(id: string, a: Attempt, callId: string) {
  return until(async () =>
    (await w.transcript(id, a)).some(
      (e) => e.type === "approval" && e.call_id === callId && e.state === "pending",
    ),
  );
}

async function respond(id: string, a: Attempt, callId: string) {
  await pending(id, a, callId);
  const outcome = await w.intervene(id, a, {
    kind: "RespondToApproval",
    call_id: callId,
    decision: { decision: "Approve" },
    note: null,
  });
  assert.equal(outcome, "Applied");
}

function until<T>(read: () => Promise<T | undefined | false>): Promise<T> {
  return untilFn("the transcript", read);
}
