// The MCP endpoint's tools against a real `skein serve` with real workers, through the SDK's
// own client: tools listed per namespace grant, a definition's run tool appearing with its
// input_schema and refusing bad input with invalid_input, start with wait returning the
// output, a run tree cancelled with its descendants, refusals as tool errors with the
// server's code, and runs as resources.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { until } from "../../support/until.ts";
import { ACTIVITIES, spawnWorker, writeJson } from "../../support/worker-endpoint.ts";
import { call, serveForSuite, tokenFor } from "../support/server.ts";
import { mcpClient } from "./support.ts";

const s = serveForSuite('[namespaces]\ndefault = "default"\n[mcp]\nenabled = true');

const ADDER = {
  name: "adder",
  task_queue: "q",
  input_schema: {
    type: "object",
    properties: { n: { type: "integer", minimum: 0 } },
    required: ["n"],
    additionalProperties: false,
  },
  steps: [{ id: "one", call: { action: "inc", input: "{ 'n': input.n }" } }],
  output: "steps.one",
};
const SLEEPER = { name: "sleeper", steps: [{ id: "s", sleep: { duration_ms: 600000 } }] };
const PARENT = {
  name: "parent",
  steps: [{ id: "c", child: { workflow: "sleeper", input: "{}" } }],
};
/** Hands its own input to the adder as a child: the child's input_schema judges it. */
const DELEGATE = {
  name: "delegate",
  steps: [{ id: "c", child: { workflow: "adder", input: "{ 'n': input.n }" } }],
};
const ELSEWHERE = { name: "elsewhere", steps: [{ id: "s", sleep: { duration_ms: 1 } }] };

let worker: ReturnType<typeof spawnWorker>;
let admin: Client;
const clients: Client[] = [];

const register = (definition: object, namespace?: string) =>
  call(s.server.url, "POST", "/workflows/definitions", {
    token: s.admin,
    body: { definition, ...(namespace === undefined ? {} : { namespace }) },
  });

async function client(token: string, namespace?: string): Promise<Client> {
  const c = await mcpClient(s.server.url, token, namespace === undefined ? {} : { namespace });
  clients.push(c);
  return c;
}

// biome-ignore lint/suspicious/noExplicitAny: tests read many structured answers
async function ok(c: Client, name: string, args: object): Promise<any> {
  const r = await c.callTool({ name, arguments: args as Record<string, unknown> });
  assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

async function refused(
  c: Client,
  name: string,
  args: object,
): Promise<{ code: string; message: string }> {
  const r = await c.callTool({ name, arguments: args as Record<string, unknown> });
  assert.equal(r.isError, true, `${name} should be refused: ${JSON.stringify(r)}`);
  const text = (r.content as { type: string; text: string }[])[0]!.text;
  return JSON.parse(text).error;
}

async function setUp() {
  for (const d of [ADDER, SLEEPER, PARENT, DELEGATE]) assert.equal((await register(d)).status, 200);
  assert.equal((await register(ELSEWHERE, "other")).status, 200);
  const tokenFile = join(s.dir.path, "worker.token");
  await writeFile(tokenFile, `${s.admin}\n`, { mode: 0o600 });
  const document = await writeJson(s.dir.path, "worker.json", {
    name: "w",
    task_queue: "q",
    actions: { inc: { module: ACTIVITIES, export: "inc" } },
  });
  worker = spawnWorker([
    "module",
    document,
    "--endpoint",
    s.server.grpc!,
    "--token-file",
    tokenFile,
  ]);
  admin = await client(s.admin);
}

after(async () => {
  for (const c of clients) await c.close();
  worker?.kill("SIGTERM");
});

const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();

describe("MCP tools", () => {
  before(setUp);
  test("the fixed tools and one run tool per definition of the granted namespace", async () => {
    const listed = await names(admin);
    for (const name of [
      "namespaces_list",
      "definitions_list",
      "workflow_start",
      "workflow_describe",
      "workflow_list",
      "workflow_history",
      "workflow_signal",
      "workflow_cancel",
      "workflow_pause",
      "workflow_resume",
      "attempts_list",
      "transcript_read",
      "intervene",
      "run_adder",
      "run_parent",
      "run_sleeper",
    ]) {
      assert.ok(listed.includes(name), `${name} in ${listed}`);
    }
    assert.ok(
      !listed.includes("run_elsewhere"),
      "another namespace's definitions are not this endpoint's",
    );
  });

  test("tools are listed per namespace grant: another namespace's are invisible", async () => {
    const otherOnly = await tokenFor(s.dir.path, { subject: "o", namespaces: ["other"] });
    const plain = await client(otherOnly);
    assert.deepEqual(
      (await names(plain)).filter((n) => n.startsWith("run_")),
      [],
      "default is not granted",
    );
    const scoped = await client(otherOnly, "other");
    assert.deepEqual(
      (await names(scoped)).filter((n) => n.startsWith("run_")),
      ["run_elsewhere"],
    );
    assert.deepEqual((await ok(scoped, "namespaces_list", {})).namespaces, [{ name: "other" }]);
    const forbidden = await refused(plain, "definitions_list", { namespace: "default" });
    assert.equal(forbidden.code, "forbidden");
    assert.equal((await refused(scoped, "run_adder", { n: 1 })).code, "definition_not_found");
  });

  test("a definition's tool appears after registration with its input_schema; bad input is invalid_input", async () => {
    const greet = {
      name: "greet",
      input_schema: {
        type: "object",
        properties: { who: { type: "string", minLength: 1 } },
        required: ["who"],
      },
      steps: [{ id: "w", wait: { signal: "go" } }],
    };
    assert.ok(!(await names(admin)).includes("run_greet"));
    assert.equal((await register(greet)).status, 200);
    const tool = (await admin.listTools()).tools.find((t) => t.name === "run_greet");
    assert.deepEqual(tool?.inputSchema, greet.input_schema);
    const bad = await refused(admin, "run_greet", { who: "" });
    assert.equal(bad.code, "invalid_input");
    assert.match(bad.message, /input\.who must NOT have fewer than 1 characters/);
    const viaStart = await refused(admin, "workflow_start", { name: "greet", input: {} });
    assert.equal(viaStart.code, "invalid_input");
  });

  test("a child whose input its definition's input_schema refuses fails the parent with invalid_input and never starts", async () => {
    const good = await ok(admin, "run_delegate", { n: 3 });
    assert.deepEqual([good.run.status, good.run.output], ["Completed", { n: 4 }]);
    const bad = await ok(admin, "run_delegate", { n: -1 });
    assert.equal(bad.run.status, "Failed", JSON.stringify(bad.run));
    assert.equal(bad.run.failure.code, "invalid_input");
    assert.match(
      bad.run.failure.message,
      /^step "c": the input does not satisfy the input_schema of "adder": input\.n must be >= 0/,
    );
    const history = await ok(admin, "workflow_history", { workflow_id: bad.workflow_id });
    const types = history.events.map((e: { type: string }) => e.type);
    assert.ok(!types.includes("ChildStarted"), `no child started: ${types}`);
    const failed = history.events.find((e: { type: string }) => e.type === "RunFailed");
    assert.equal(failed.code, "invalid_input");
  });

  test("workflow_start with wait_ms returns the run's output; run_<name> too", async () => {
    const started = await ok(admin, "workflow_start", {
      name: "adder",
      input: { n: 41 },
      wait_ms: 60000,
    });
    assert.equal(started.created, true);
    assert.equal(started.run.status, "Completed", JSON.stringify(started));
    assert.deepEqual(started.run.output, { n: 42 });
    const ran = await ok(admin, "run_adder", { n: 1 });
    assert.deepEqual([ran.run.status, ran.run.output], ["Completed", { n: 2 }]);
    const described = await ok(admin, "workflow_describe", {
      workflow_id: ran.workflow_id,
      wait_ms: 1000,
    });
    assert.equal(described.run.status, "Completed");
    const history = await ok(admin, "workflow_history", { workflow_id: ran.workflow_id, limit: 2 });
    assert.equal(history.events.length, 2);
    assert.equal(history.next, 2);
    const listed = await ok(admin, "workflow_list", {
      definition: "adder",
      order: "newest",
      limit: 1,
    });
    assert.equal(listed.runs[0].workflow_id, ran.workflow_id);
  });

  test("a wait with a progress token streams progress (SSE) and ends with the run", async () => {
    const started = await ok(admin, "workflow_start", { name: "sleeper" });
    const progress: number[] = [];
    // A progress callback makes the client send a progress token: the answer becomes SSE.
    const r = await admin.callTool(
      { name: "workflow_describe", arguments: { workflow_id: started.workflow_id, wait_ms: 6000 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress), resetTimeoutOnProgress: true },
    );
    assert.ok(!r.isError, JSON.stringify(r.content));
    assert.equal((r.structuredContent as { run: { status: string } }).run.status, "Running");
    assert.ok(progress.length >= 1, "at least one progress report in 6 s (one each 5 s)");
    await ok(admin, "workflow_cancel", { workflow_id: started.workflow_id });
  });

  test("a run tree cancelled through MCP cancels its descendants, and says which", async () => {
    const parent = await ok(admin, "workflow_start", { name: "parent" });
    const child = await until("the child run", async () => {
      const h = await ok(admin, "workflow_history", { workflow_id: parent.workflow_id });
      return h.events.find((e: { type: string }) => e.type === "ChildStarted")?.child_run_id;
    });
    const done = await ok(admin, "workflow_cancel", { workflow_id: parent.workflow_id });
    assert.deepEqual([done.applied, done.status], [true, "Cancelled"]);
    assert.equal(done.descendants.length, 1);
    assert.deepEqual(
      { ...done.descendants[0], status: undefined },
      {
        workflow_id: child,
        run_id: child,
        parent_run_id: parent.run_id,
        definition_name: "sleeper",
        status: undefined,
        reached: true,
      },
    );
    await until("the child cancelled", async () => {
      const d = await ok(admin, "workflow_describe", { workflow_id: child });
      return d.run.status === "Cancelled";
    });
    const again = await ok(admin, "workflow_cancel", { workflow_id: parent.workflow_id });
    assert.equal(again.applied, false);
    assert.deepEqual(
      again.descendants.map((d: { reached: boolean }) => d.reached),
      [false],
    );
  });

  test("refusals are tool errors with the server's code, never JSON-RPC errors", async () => {
    const unknown = "0190f4a2-0000-7000-8000-000000000000";
    assert.equal(
      (await refused(admin, "workflow_describe", { workflow_id: unknown })).code,
      "run_not_found",
    );
    assert.equal(
      (await refused(admin, "workflow_describe", { workflow_id: "nope" })).code,
      "decode_refused",
    );
    assert.equal(
      (await refused(admin, "workflow_start", { name: "adder", input: { n: 1 }, wait_ms: 60001 }))
        .code,
      "decode_refused",
    );
    assert.equal(
      (await refused(admin, "workflow_signal", { workflow_id: unknown, signal: "go", extra: 1 }))
        .code,
      "decode_refused",
    );
    await assert.rejects(
      admin.callTool({ name: "no_such_tool", arguments: {} }),
      /no tool named no_such_tool/,
    );
  });

  test("runs are resources: the describe view and its history; another namespace's is not found", async () => {
    const ran = await ok(admin, "run_adder", { n: 5 });
    const templates = (await admin.listResourceTemplates()).resourceTemplates.map(
      (t) => t.uriTemplate,
    );
    assert.ok(templates.includes("skein://runs/{namespace}/{workflow_id}"));
    const uri = `skein://runs/default/${ran.workflow_id}`;
    assert.ok((await admin.listResources()).resources.some((r) => r.uri === uri));
    const read = await admin.readResource({ uri });
    const view = JSON.parse((read.contents[0] as { text: string }).text);
    assert.deepEqual(view.run.output, { n: 6 });
    const history = JSON.parse(
      ((await admin.readResource({ uri: `${uri}/history` })).contents[0] as { text: string }).text,
    );
    assert.equal(history.events[0].type, "RunStarted");
    const otherOnly = await client(
      await tokenFor(s.dir.path, { subject: "o", namespaces: ["other"] }),
    );
    await assert.rejects(otherOnly.readResource({ uri }), /resource not found/);
  });
});
