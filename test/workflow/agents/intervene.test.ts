// Attempt intervention end to end: `skein serve` (SQLite), real `skein worker agent` processes
// holding the agent transport, and the scripted OpenAI-compatible model server. Each kind is
// applied to a live attempt and its effect is checked in what the model is sent next, the
// transcript or the run's end; then the outcomes that are not Applied, and the HTTP errors.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type ScriptedModel, startScriptedModel } from "../../../src/testing/scripted-model.ts";
import { until } from "../../support/until.ts";
import { ACTIVITIES, SKEIN_BIN, spawnWorker, writeJson } from "../../support/worker-endpoint.ts";
import {
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

const flow = (name: string, action: string, queue = "agents") =>
  `name: ${name}\ntask_queue: ${queue}\nretry: { max_attempts: 1 }\nsteps:\n  - { id: a, call: { action: ${action}, input: input.q } }\noutput: steps.a\n`;

const DEFINITIONS = [
  flow("ask", "assistant"),
  flow("ask_limited", "limited"),
  flow("ask_streaming", "streamer"),
  // A gRPC-only worker: a module action (it advertises Cancel over gRPC, and has no
  // agent transport).
  "name: ask_plain\ntask_queue: plain\nsteps:\n  - { id: a, call: { action: hold, input: \"{ 'ms': 1500 }\" } }\noutput: steps.a\n",
  flow("ask_doomed", "assistant", "doomed"),
  "name: parent_ask\nsteps:\n  - { id: c, child: { workflow: ask, input: input } }\n",
];

let dir: { path: string; remove: () => Promise<void> };
let server: ServerProcess;
let model: ScriptedModel;
let token: string;
let configFile: string;
/** A finished attempt whose transcript holds a Cancel control, read again after a restart. */
let cancelled: { id: string; a: Attempt } | undefined;
const workers: ReturnType<typeof spawnWorker>[] = [];

/** `null` sends no bearer at all. */
const api = (path: string, body: object, bearer: string | null = token) =>
  call(server.url, "POST", path, { ...(bearer === null ? {} : { token: bearer }), body });

async function start(name: string, q = "hello"): Promise<string> {
  const r = await api("/workflows/start", { name, input: { q } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.workflow_id;
}

interface Attempt {
  run_id: string;
  activity_id: number;
  attempt: number;
  capabilities: string[];
}

/**
 * The attempt of a run once its model call has started (the worker announces the attempt
 * over the agent transport before calling the model, so it is live by then).
 */
async function liveAttempt(workflowId: string, seen: number): Promise<Attempt> {
  await requests(seen + 1);
  return until(`a live attempt of ${workflowId}`, async () => {
    const r = await api("/workflows/attempts", { workflow_id: workflowId });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.attempts[0];
  });
}

async function intervene(workflowId: string, a: Attempt, kind: object): Promise<string> {
  const r = await api("/workflows/intervene", {
    workflow_id: workflowId,
    run_id: a.run_id,
    activity_id: a.activity_id,
    attempt: a.attempt,
    kind,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body), ["outcome"]);
  return r.body.outcome.outcome;
}

async function ended(workflowId: string) {
  return until(`${workflowId} to end`, async () => {
    const r = await api("/workflows/describe", { workflow_id: workflowId });
    return r.body.run.status === "Running" ? undefined : r.body.run;
  });
}

async function transcript(workflowId: string, a: Attempt): Promise<Record<string, unknown>[]> {
  const r = await api("/workflows/transcript", {
    workflow_id: workflowId,
    run_id: a.run_id,
    activity_id: a.activity_id,
    attempt: a.attempt,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.entries;
}

/** Waits until the model has received `n` requests in all. */
const requests = (n: number) =>
  until(`model request ${n}`, async () => (model.requests.length >= n ? true : undefined));

before(async () => {
  dir = await tempDir();
  model = await startScriptedModel();
  configFile = await writeConfig(dir.path, '[namespaces]\ndefault = "default"');
  server = await startServe(configFile);
  token = await tokenFor(dir.path, { subject: "operator", namespaces: "*", worker: true });
  for (const definition of DEFINITIONS) {
    const r = await api("/workflows/definitions", { definition });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const tokenFile = join(dir.path, "worker.token");
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  const agent = { base_url: model.url, model: "scripted", system: "Be brief.", max_turns: 5 };
  const actions = {
    assistant: { agent },
    limited: { agent: { ...agent, capabilities: ["Cancel"] } },
    streamer: { agent: { ...agent, stream: true } },
    echo: {
      description: "echoes",
      exec: { command: [process.execPath, "-e", "process.stdin.pipe(process.stdout)"] },
    },
    lookup: {
      description: "looks things up",
      approval: "required",
      exec: { command: [process.execPath, "-e", "process.stdout.write(JSON.stringify('found'))"] },
    },
  };
  const common = ["--endpoint", server.grpc!, "--token-file", tokenFile];
  for (const queue of ["agents", "doomed"]) {
    const doc = await writeJson(dir.path, `${queue}.json`, {
      name: queue,
      task_queue: queue,
      actions,
    });
    // Agent workers find the agent transport where the server's gRPC welcome says it is.
    workers.push(spawnWorker(["agent", doc, ...common]));
  }
  const plain = await writeJson(dir.path, "plain.json", {
    name: "plain",
    task_queue: "plain",
    actions: { hold: { module: ACTIVITIES, export: "hold" } },
  });
  workers.push(spawnWorker(["module", plain, ...common]));
});

after(async () => {
  for (const w of workers) w.kill();
  await server?.stop();
  await model?.close();
  await dir?.remove();
});

/** Runs `skein ARGS` without blocking this process (the scripted model lives here). */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [SKEIN_BIN, ...args, "--server", server.url, "--token", token],
      { env: { ...process.env, SKEIN_LOG_LEVEL: "warn" } },
      (error, stdout, stderr) =>
        done({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
  });
}

const toolCall = (id: string, name: string, args = "{}") => ({ id, name, arguments: args });

describe("intervention on a live agent attempt", () => {
  test("the attempts read lists the attempt with its advertised capabilities", async () => {
    const seen = model.requests.length;
    model.push({ content: "done", delay_ms: 800 });
    const id = await start("ask");
    const a = await liveAttempt(id, seen);
    assert.deepEqual(Object.keys(a).sort(), ["activity_id", "attempt", "capabilities", "run_id"]);
    assert.match(a.run_id, /^[0-9a-f-]{36}$/);
    assert.equal(typeof a.activity_id, "number");
    assert.equal(a.attempt, 1);
    assert.deepEqual(a.capabilities, [
      "Cancel",
      "InjectMessage",
      "PauseResume",
      "UpdateBudget",
      "RespondToApproval",
    ]);
    const run = await ended(id);
    assert.equal(run.status, "Completed");
    assert.equal(run.output, "done");
  });

  test("InjectMessage Normal appears as the next user turn", async () => {
    const seen = model.requests.length;
    model.push(
      { tool_calls: [toolCall("c1", "echo", '{"x":1}')], delay_ms: 1000 },
      { content: "ok" },
    );
    const id = await start("ask");
    const a = await liveAttempt(id, seen);
    const text = "also mention the weather";
    assert.equal(
      await intervene(id, a, { kind: "InjectMessage", text, priority: { priority: "Normal" } }),
      "Applied",
    );
    assert.equal((await ended(id)).status, "Completed");
    const next = model.requests[seen + 1]!.messages;
    assert.deepEqual(
      next.slice(-3).map((m) => m.role),
      ["assistant", "tool", "user"],
    );
    assert.equal(next.at(-1)!.content, text);
    assert.equal(next.at(-2)!.content, '{"x":1}');
  });

  test("a streaming agent assembles tool calls and text from the chunks", async () => {
    const seen = model.requests.length;
    model.push(
      { tool_calls: [toolCall("s1", "echo", '{"streamed":true}')] },
      { content: "a streamed answer, long enough to come in several pieces" },
    );
    const id = await start("ask_streaming");
    const run = await ended(id);
    assert.equal(run.output, "a streamed answer, long enough to come in several pieces");
    assert.equal(model.requests[seen]!.stream, true);
    const toolMessage = model.requests[seen + 1]!.messages.at(-1)!;
    assert.deepEqual([toolMessage.role, toolMessage.content], ["tool", '{"streamed":true}']);
  });

  test("InjectMessage Interrupt cuts a slow model call short and steers at once", async () => {
    const seen = model.requests.length;
    model.push({ content: "too late", delay_ms: 60_000 }, { content: "steered" });
    const id = await start("ask");
    const a = await liveAttempt(id, seen);
    assert.equal(
      await intervene(id, a, {
        kind: "InjectMessage",
        text: "stop, answer now",
        priority: { priority: "Interrupt" },
      }),
      "Applied",
    );
    const run = await ended(id);
    assert.equal(run.output, "steered");
    assert.equal(model.requests[seen + 1]!.messages.at(-1)!.content, "stop, answer now");
    const entries = await transcript(id, a);
    assert.ok(entries.some((e) => e.type === "interrupted"));
  });

  test("PauseResume holds the loop between steps and resume continues it", async () => {
    const seen = model.requests.length;
    model.push({ tool_calls: [toolCall("c2", "echo")], delay_ms: 1000 }, { content: "resumed" });
    const id = await start("ask");
    const a = await liveAttempt(id, seen);
    assert.equal(await intervene(id, a, { kind: "PauseResume", paused: true }), "Applied");
    // The paused loop ran its tool and holds before the next model call.
    await until("the tool result", async () =>
      (await transcript(id, a)).some((e) => e.type === "tool_result") ? true : undefined,
    );
    // Time passes on purpose: a loop that ignored the pause would call the model within it.
    // A loaded machine only makes this negative check weaker, never fail wrongly.
    await new Promise((done) => setTimeout(done, 300));
    assert.equal(model.requests.length, seen + 1);
    assert.equal(
      (await api("/workflows/describe", { workflow_id: id })).body.run.status,
      "Running",
    );
    assert.equal(await intervene(id, a, { kind: "PauseResume", paused: false }), "Applied");
    assert.equal((await ended(id)).output, "resumed");
  });

  test("UpdateBudget stops the loop at the new limit; null leaves a limit unchanged", async () => {
    const seen = model.requests.length;
    model.push({ tool_calls: [toolCall("c3", "echo")], delay_ms: 1000 });
    const id = await start("ask");
    const a = await liveAttempt(id, seen);
    assert.equal(
      await intervene(id, a, { kind: "UpdateBudget", max_tokens: null, max_turns: 1 }),
      "Applied",
    );
    const run = await ended(id);
    assert.equal(run.status, "Failed");
    assert.equal(model.requests.length, seen + 1);
    const end = (await transcript(id, a)).find((e) => e.type === "end");
    assert.deepEqual(end, { type: "end", reason: "max_turns", turns: 1 });
  });

  for (const [decision, result] of [
    ["Approve", '"found"'],
    ["Deny", "denied: not now"],
  ] as const) {
    test(`RespondToApproval ${decision} decides the pending tool call`, async () => {
      const seen = model.requests.length;
      const callId = `approval-${decision}`;
      model.push({ tool_calls: [toolCall(callId, "lookup")] }, { content: "fine" });
      const id = await start("ask");
      const a = await liveAttempt(id, seen);
      await until("the pending approval", async () =>
        (await transcript(id, a)).some((e) => e.type === "approval" && e.state === "pending")
          ? true
          : undefined,
      );
      const kind = {
        kind: "RespondToApproval",
        call_id: callId,
        decision: { decision },
        note: decision === "Deny" ? "not now" : null,
      };
      assert.equal(await intervene(id, a, kind), "Applied");
      assert.equal((await ended(id)).status, "Completed");
      const toolMessage = model.requests[seen + 1]!.messages.at(-1)!;
      assert.deepEqual([toolMessage.role, toolMessage.content], ["tool", result]);
      // A second answer to the same call finds nothing waiting.
      assert.equal(await intervene(id, a, kind), "StaleTarget");
    });
  }

  test("Cancel ends the attempt; the subject and time are stamped in the transcript", async () => {
    const seen = model.requests.length;
    model.push({ content: "never", delay_ms: 60_000 });
    const id = await start("ask");
    const a = await liveAttempt(id, seen);
    const before = Date.now();
    assert.equal(await intervene(id, a, { kind: "Cancel", reason: "operator stop" }), "Applied");
    const run = await ended(id);
    // A cancelled attempt fails non-retryably with code `cancelled`, so its activity fails.
    assert.equal(run.status, "Failed");
    const control = (await transcript(id, a)).find((e) => e.type === "control") as {
      control: { kind: object; subject: string; at: string };
    };
    assert.deepEqual(control.control.kind, { kind: "Cancel", reason: "operator stop" });
    assert.equal(control.control.subject, "operator");
    assert.ok(Date.parse(control.control.at) >= before - 1000);
    cancelled = { id, a };
    // The attempt is no longer live: a finished attempt is a StaleTarget.
    assert.equal(await intervene(id, a, { kind: "Cancel", reason: "again" }), "StaleTarget");
    assert.deepEqual((await api("/workflows/attempts", { workflow_id: id })).body.attempts, []);
  });

  test("CapabilityNotSupported for a primitive the action does not advertise", async () => {
    const seen = model.requests.length;
    model.push({ content: "never", delay_ms: 60_000 });
    const id = await start("ask_limited");
    const a = await liveAttempt(id, seen);
    assert.deepEqual(a.capabilities, ["Cancel"]);
    for (const kind of [
      { kind: "InjectMessage", text: "hi", priority: { priority: "Normal" } },
      { kind: "PauseResume", paused: true },
      { kind: "UpdateBudget", max_tokens: 5, max_turns: null },
      { kind: "RespondToApproval", call_id: "x", decision: { decision: "Approve" }, note: null },
    ]) {
      assert.equal(await intervene(id, a, kind), "CapabilityNotSupported", JSON.stringify(kind));
    }
    assert.equal(await intervene(id, a, { kind: "Cancel", reason: "done" }), "Applied");
    await ended(id);
  });

  test("StaleTarget for an attempt of a gRPC-only worker", async () => {
    const id = await start("ask_plain");
    const a: Attempt = await until(`a live attempt of ${id}`, async () => {
      const r = await api("/workflows/attempts", { workflow_id: id });
      return r.body.attempts[0];
    });
    assert.deepEqual(a.capabilities, ["Cancel"]);
    assert.equal(await intervene(id, a, { kind: "Cancel", reason: "x" }), "StaleTarget");
    // The Cancel never reached it: it held its whole 1.5 s.
    assert.ok((await ended(id)).output.held >= 1_400);
  });

  test("workflow cancellation ends the live agent attempt", async () => {
    const seen = model.requests.length;
    model.push({ content: "never", delay_ms: 60_000 });
    const id = await start("ask");
    await liveAttempt(id, seen);
    const r = await api("/workflows/cancel", { workflow_id: id });
    assert.equal(r.body.status, "Cancelled");
    await until("no live attempt", async () => {
      const list = (await api("/workflows/attempts", { workflow_id: id })).body.attempts;
      return list.length === 0 ? true : undefined;
    });
  });

  test("cancelling a parent run ends its child's live agent attempt", async () => {
    const seen = model.requests.length;
    model.push({ content: "never", delay_ms: 60_000 });
    const parent = await start("parent_ask");
    await requests(seen + 1);
    const child = await until("the child run", async () => {
      const r = await api("/workflows/history", { workflow_id: parent });
      const started = r.body.events.find((e: { type: string }) => e.type === "ChildStarted");
      return started?.child_run_id as string | undefined;
    });
    await liveAttempt(child, seen);
    const r = await api("/workflows/cancel", { workflow_id: parent });
    assert.equal(r.body.status, "Cancelled");
    assert.equal((await ended(child)).status, "Cancelled");
    await until("no live attempt of the child", async () => {
      const list = (await api("/workflows/attempts", { workflow_id: child })).body.attempts;
      return list.length === 0 ? true : undefined;
    });
  });

  test("StaleTarget for an attempt whose worker was killed", async () => {
    const seen = model.requests.length;
    model.push({ content: "never", delay_ms: 60_000 });
    const id = await start("ask_doomed");
    const a = await liveAttempt(id, seen);
    const doomed = workers[1]!; // agents, doomed, plain
    doomed.kill("SIGKILL");
    await doomed.exited;
    assert.equal(await intervene(id, a, { kind: "PauseResume", paused: true }), "StaleTarget");
    await api("/workflows/cancel", { workflow_id: id });
  });
});

describe("skein attempts and skein intervene", () => {
  test("list, pause, budget, inject, approve, resume from the command line", async () => {
    const seen = model.requests.length;
    // The approval holds the loop, so the commands' start-up time cannot race it.
    model.push({ tool_calls: [toolCall("c9", "lookup")] }, { content: "via cli" });
    const id = await start("ask");
    const a = await liveAttempt(id, seen);
    const listed = await cli(["attempts", id]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout).attempts, [a]);
    const ident = [id, a.run_id, String(a.activity_id), String(a.attempt)];
    await until("the pending approval", async () =>
      (await transcript(id, a)).some((e) => e.type === "approval") ? true : undefined,
    );
    const paused = await cli(["intervene", "pause", ...ident]);
    assert.equal(paused.code, 0, paused.stderr);
    assert.deepEqual(JSON.parse(paused.stdout), { outcome: { outcome: "Applied" } });
    const budget = await cli(["intervene", "budget", ...ident, "--max-turns", "4"]);
    assert.equal(budget.code, 0, budget.stderr);
    const injected = await cli(["intervene", "inject", ...ident, "and be quick"]);
    assert.equal(injected.code, 0, injected.stderr);
    const approved = await cli(["intervene", "approve", ...ident, "c9", "--note", "ok"]);
    assert.equal(approved.code, 0, approved.stderr);
    await until("the tool result", async () =>
      (await transcript(id, a)).some((e) => e.type === "tool_result") ? true : undefined,
    );
    assert.equal(model.requests.length, seen + 1);
    assert.equal((await cli(["intervene", "resume", ...ident])).code, 0);
    assert.equal((await ended(id)).output, "via cli");
    assert.equal(model.requests[seen + 1]!.messages.at(-1)!.content, "and be quick");
    const kinds = (await transcript(id, a))
      .filter((e) => e.type === "control")
      .map((e) => (e.control as { kind: { kind: string } }).kind.kind);
    assert.deepEqual(kinds, [
      "PauseResume",
      "UpdateBudget",
      "InjectMessage",
      "RespondToApproval",
      "PauseResume",
    ]);
    // skein transcript: the same entries, one JSON value per line (piped), or text lines.
    const printed = await cli(["transcript", ...ident]);
    assert.equal(printed.code, 0, printed.stderr);
    const lines = printed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(lines, await transcript(id, a));
    const text = await cli(["transcript", ...ident, "-o", "text"]);
    assert.equal(text.stdout.trim().split("\n").length, lines.length);
    assert.match(text.stdout, /^user_turn {2}\{/m);
    assert.match(text.stdout, /^control {2}\{/m);
    // After the end: StaleTarget, exit 1.
    const stale = await cli(["intervene", "pause", ...ident]);
    assert.deepEqual(
      [stale.code, JSON.parse(stale.stdout)],
      [1, { outcome: { outcome: "StaleTarget" } }],
    );
    // Cancelling one attempt is HTTP only.
    assert.equal((await cli(["intervene", "cancel", ...ident])).code, 2);
    assert.equal((await cli(["intervene", "budget", ...ident])).code, 2);
  });
});

describe("transcripts are durable", () => {
  test("a transcript reads the same after the server restarts", async () => {
    assert.ok(cancelled !== undefined, "the Cancel test ran first");
    const before = await transcript(cancelled.id, cancelled.a);
    assert.ok(before.some((e) => e.type === "control"));
    await server.stop();
    server = await startServe(configFile);
    assert.deepEqual(await transcript(cancelled.id, cancelled.a), before);
  });
});

describe("intervention refusals are HTTP errors, not outcomes", () => {
  const ref = {
    workflow_id: "00000000-0000-4000-8000-000000000000",
    run_id: "00000000-0000-4000-8000-000000000001",
    activity_id: 0,
    attempt: 1,
  };
  const cancel = { kind: "Cancel", reason: "x" };
  const rows: [string, () => Promise<string | null>, object, number][] = [
    ["no bearer", async () => null, { ...ref, kind: cancel }, 401],
    [
      "no namespace grant",
      () => tokenFor(dir.path, { namespaces: ["other"] }),
      { ...ref, kind: cancel },
      403,
    ],
    ["bad workflow UUID", async () => token, { ...ref, workflow_id: "nope", kind: cancel }, 400],
    ["bad run UUID", async () => token, { ...ref, run_id: "nope", kind: cancel }, 400],
    ["unknown kind tag", async () => token, { ...ref, kind: { kind: "Explode" } }, 400],
    ["missing kind tag", async () => token, { ...ref, kind: { reason: "x" } }, 400],
    [
      "Cancel reason not a string",
      async () => token,
      { ...ref, kind: { kind: "Cancel", reason: 5 } },
      400,
    ],
    [
      "InjectMessage unknown priority",
      async () => token,
      { ...ref, kind: { kind: "InjectMessage", text: "t", priority: { priority: "Urgent" } } },
      400,
    ],
    [
      "PauseResume paused not boolean",
      async () => token,
      { ...ref, kind: { kind: "PauseResume", paused: "yes" } },
      400,
    ],
    [
      "UpdateBudget max_turns missing",
      async () => token,
      { ...ref, kind: { kind: "UpdateBudget", max_tokens: null } },
      400,
    ],
    [
      "UpdateBudget negative max_tokens",
      async () => token,
      { ...ref, kind: { kind: "UpdateBudget", max_tokens: -1, max_turns: null } },
      400,
    ],
    [
      "RespondToApproval unknown decision",
      async () => token,
      {
        ...ref,
        kind: {
          kind: "RespondToApproval",
          call_id: "c",
          decision: { decision: "Maybe" },
          note: null,
        },
      },
      400,
    ],
    [
      "activity_id not an integer",
      async () => token,
      { ...ref, activity_id: "0", kind: cancel },
      400,
    ],
    ["attempt negative", async () => token, { ...ref, attempt: -1, kind: cancel }, 400],
  ];
  for (const [name, bearer, body, status] of rows) {
    test(name, async () => {
      const r = await api("/workflows/intervene", body, await bearer());
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.equal(r.body.outcome, undefined);
    });
  }

  test("a well-formed intervention on no live attempt is StaleTarget", async () => {
    const r = await api("/workflows/intervene", { ...ref, kind: cancel });
    assert.deepEqual([r.status, r.body], [200, { outcome: { outcome: "StaleTarget" } }]);
  });

  for (const [name, bearer, status] of [
    ["attempts without a bearer", async () => null, 401],
    [
      "attempts without the namespace grant",
      () => tokenFor(dir.path, { namespaces: ["other"] }),
      403,
    ],
  ] as const) {
    test(name, async () => {
      const r = await api("/workflows/attempts", { workflow_id: ref.workflow_id }, await bearer());
      assert.equal(r.status, status);
    });
  }

  test("attempts of a workflow that does not exist is 404 run_not_found", async () => {
    const r = await api("/workflows/attempts", { workflow_id: ref.workflow_id });
    assert.deepEqual([r.status, r.body.error?.code], [404, "run_not_found"]);
  });

  // Access is to the workflow: naming a namespace the bearer holds does not reach a workflow
  // of another namespace (spec: "namespace access to the workflow").
  test("a workflow is read only through its own namespace", async () => {
    const workflowId = await start("ask_plain");
    const other = await tokenFor(dir.path, { namespaces: ["other"] });
    const asOther = { namespace: "other", workflow_id: workflowId };
    const attempts = await api("/workflows/attempts", asOther, other);
    assert.deepEqual([attempts.status, attempts.body.error?.code], [404, "run_not_found"]);
    const run = (await api("/workflows/describe", { workflow_id: workflowId })).body.run;
    const read = await api(
      "/workflows/transcript",
      { ...asOther, run_id: run.run_id, activity_id: 0, attempt: 1 },
      other,
    );
    assert.deepEqual([read.status, read.body.error?.code], [404, "run_not_found"]);
    const own = await api("/workflows/attempts", { workflow_id: workflowId }, other);
    assert.deepEqual([own.status, own.body.error?.code], [403, "forbidden"]);
  });
});
