/**
 * The run console's test world, all real processes: `skein serve` (SQLite) with namespaces
 * `default` and `other`, a `skein worker module` serving the activities fixture on queue
 * `work`, a `skein worker agent` on queue `agents` against the scripted model (its `lookup`
 * tool needs approval), the definitions the browser tests open, and a few finished runs.
 */

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after } from "node:test";
import { type ScriptedModel, startScriptedModel } from "../../../src/testing/scripted-model.ts";
import { until } from "../../support/until.ts";
import { ACTIVITIES, spawnWorker, writeJson } from "../../support/worker-endpoint.ts";
import {
  type Answer,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

export const DEFINITIONS = [
  "name: retrying\ntask_queue: work\nretry: { max_attempts: 3, initial_backoff_ms: 200 }\nsteps:\n  - { id: double, call: { action: flaky, input: \"{ 'n': input.n }\" } }\n  - { id: rest, sleep: { duration_ms: 50 } }\noutput: steps.double\n",
  "name: failing\ntask_queue: work\nretry: { max_attempts: 2, initial_backoff_ms: 100 }\nsteps:\n  - { id: boom, call: { action: fail, input: \"{ 'message': 'no luck' }\" } }\n",
  "name: holding\ntask_queue: work\nsteps:\n  - { id: hold, call: { action: hold, input: \"{ 'ms': 600000 }\" } }\n",
  "name: branch\nsteps:\n  - { id: leaf, child: { workflow: holding, input: input } }\n",
  "name: tree\nsteps:\n  - { id: branch, child: { workflow: branch, input: input } }\n",
  "name: waiter\nsteps:\n  - { id: w, wait: { signal: go } }\n",
  "name: ask\ntask_queue: agents\nretry: { max_attempts: 1 }\nsteps:\n  - { id: a, call: { action: assistant, input: input.q } }\noutput: steps.a\n",
  "name: ask_limited\ntask_queue: agents\nretry: { max_attempts: 1 }\nsteps:\n  - { id: a, call: { action: limited, input: input.q } }\noutput: steps.a\n",
  "name: stuck\ntask_queue: nobody\nsteps:\n  - { id: s, call: { action: nothing } }\n",
];

export interface UiWorld {
  readonly url: string;
  readonly dir: string;
  readonly configFile: string;
  /** Every namespace, worker grant. */
  readonly token: string;
  readonly model: ScriptedModel;
  readonly server: ServerProcess;
  api(path: string, body: object, bearer?: string): Promise<Answer>;
  start(name: string, input?: unknown, namespace?: string): Promise<string>;
  /** The run once `check` holds for its describe answer. */
  // biome-ignore lint/suspicious/noExplicitAny: a describe answer; each test asserts its own
  until(workflowId: string, what: string, check: (d: any) => boolean): Promise<any>;
}

export async function uiWorld(): Promise<UiWorld> {
  const dir = await tempDir();
  const model = await startScriptedModel();
  const configFile = await writeConfig(
    dir.path,
    '[namespaces]\ndefault = "default"\n[deployments]\nenabled = true',
  );
  const server = await startServe(configFile);
  const token = await tokenFor(dir.path, {
    subject: "operator",
    namespaces: "*",
    worker: true,
    deploy: true,
  });
  const workers: ReturnType<typeof spawnWorker>[] = [];
  after(async () => {
    for (const w of workers) w.kill();
    await Promise.all(workers.map((w) => w.exited));
    await server.stop();
    await model.close();
    await dir.remove();
  });
  const api = (path: string, body: object, bearer = token) =>
    call(server.url, "POST", path, { token: bearer, body });
  for (const name of ["default", "other"]) {
    assert.equal((await api("/namespaces", { name })).status, 200);
  }
  // Every definition in `default`; `other` holds one, so a scoped bearer has runs to see.
  const registrations = [...DEFINITIONS.map((d) => [d, "default"]), [DEFINITIONS[5]!, "other"]];
  for (const [definition, namespace] of registrations) {
    const r = await api("/workflows/definitions", { definition, namespace });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const file = join(dir.path, "worker.token");
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  const endpoint = ["--endpoint", server.grpc!, "--token-file", file];
  const fixture = (name: string) => ({ module: ACTIVITIES, export: name });
  const work = await writeJson(dir.path, "work.json", {
    name: "work",
    task_queue: "work",
    actions: { flaky: fixture("flaky"), fail: fixture("fail"), hold: fixture("hold") },
  });
  workers.push(spawnWorker(["module", work, ...endpoint]));
  const agents = await writeJson(dir.path, "agents.json", {
    name: "helpers",
    task_queue: "agents",
    actions: {
      assistant: { agent: { base_url: model.url, model: "scripted", system: "Be brief." } },
      // Advertises Cancel only: other interventions answer CapabilityNotSupported.
      limited: { agent: { base_url: model.url, model: "scripted", capabilities: ["Cancel"] } },
      lookup: {
        description: "looks a word up",
        approval: "required",
        exec: {
          command: [process.execPath, "-e", "process.stdout.write(JSON.stringify('found'))"],
        },
      },
    },
  });
  workers.push(spawnWorker(["agent", agents, ...endpoint]));
  // A deployment the server supervises, for the deployments view.
  const echoes = await writeJson(dir.path, "echoes.json", {
    name: "echoer",
    task_queue: "echoes",
    actions: { echo: { command: ["cat"] } },
  });
  const put = await call(server.url, "PUT", "/worker-deployments/echoes", {
    token,
    body: {
      artifact: {
        type: "builtin",
        verb: ["worker", "exec", echoes, "--namespace", "default", ...endpoint],
      },
      namespaces: ["default"],
      task_queue: "echoes",
      desired: "running",
    },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const start = async (name: string, input: unknown = {}, namespace = "default") => {
    const r = await api("/workflows/start", { name, input, namespace });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.workflow_id as string;
  };
  // biome-ignore lint/suspicious/noExplicitAny: a describe answer; each test asserts its own
  const untilRun = (workflowId: string, what: string, check: (d: any) => boolean) =>
    until(`${workflowId} ${what}`, async () => {
      const r = await api("/workflows/describe", { workflow_id: workflowId, namespace: "default" });
      return r.status === 200 && check(r.body) ? r.body : undefined;
    });
  return {
    url: server.url,
    dir: dir.path,
    configFile,
    token,
    model,
    server,
    api,
    start,
    until: untilRun,
  };
}
