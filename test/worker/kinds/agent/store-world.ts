/**
 * Real processes for the agent-in-the-store tests: skein-idp, `skein-store serve` with `idp`
 * and placement, `skein-store mcp-http`, `skein serve`, the scripted model and `skein worker
 * agent` processes whose actions name the store's MCP endpoint, with passes from skein-idp
 * by client credentials. An operator (admin on the database) makes collections and reads
 * branches over the socket; the agent's client gets the grants each test gives it.
 */

import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { StoreClient } from "../../../../src/store/client/client.ts";
import { type ScriptedModel, startScriptedModel } from "../../../../src/testing/scripted-model.ts";
import { addClient, clientPass, grant } from "../../../store/idp/support.ts";
import { DATABASE, mcpWorld } from "../../../store/mcp/fixture.ts";
import { until } from "../../../support/until.ts";
import { spawnWorker, writeJson } from "../../../support/worker-endpoint.ts";
import { call, startServe, tokenFor, writeConfig } from "../../../workflow/support/server.ts";

export { DATABASE };

export interface Attempt {
  run_id: string;
  activity_id: number;
  attempt: number;
}

export async function storeWorld(
  options: { mcp?: Record<string, unknown>; idpArgs?: readonly string[] } = {},
) {
  const world = await mcpWorld({ placement: true, idpArgs: options.idpArgs ?? [] });
  const mcp = await world.mcp({ listen: "127.0.0.1:0", allowed_origins: [], ...options.mcp });
  const dir = await mkdtemp(join(tmpdir(), "skein-agent-store-"));
  const model: ScriptedModel = await startScriptedModel();
  const server = await startServe(await writeConfig(dir, '[namespaces]\ndefault = "default"'));
  const token = await tokenFor(dir, { subject: "operator", namespaces: "*", worker: true });
  const tokenFile = join(dir, "worker.token");
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  const operatorSecret = addClient(world.idp, "operator");
  grant(world.idp, "client:operator", "admin", `db/${DATABASE}`);
  /**
   * One verb as the operator, on a connection of its own with a pass of its own (the store
   * may have restarted; passes may be short-lived).
   */
  const operator = async (verb: string, args: Record<string, unknown>): Promise<unknown> => {
    const pass = await clientPass(world.idp.issuer, "operator", operatorSecret, DATABASE);
    const client = await StoreClient.connect(world.socketPath, { pass });
    try {
      return await client.call(verb, args);
    } finally {
      await client.close();
    }
  };
  const workers: ReturnType<typeof spawnWorker>[] = [];
  after(async () => {
    for (const w of workers) {
      w.kill("SIGKILL");
      await w.exited;
    }
    await server.stop();
    await model.close();
    mcp.process.child.kill("SIGTERM");
    world.store().child.kill("SIGTERM");
  });

  const api = async (path: string, body: object) => {
    const r = await call(server.url, "POST", path, { token, body });
    assert.ok(r.status === 200, `${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  /** A client of skein-idp with a secret file and `grants` (pairs of level and resource). */
  const agentClient = async (id: string, grants: readonly [string, string][]) => {
    const secret = addClient(world.idp, id);
    for (const [level, resource] of grants) grant(world.idp, `client:${id}`, level, resource);
    const secretFile = join(dir, `${id}.secret`);
    await writeFile(secretFile, `${secret}\n`, { mode: 0o600 });
    return {
      client_credentials: {
        issuer: world.idp.issuer,
        client_id: id,
        secret_file: secretFile,
        resource: `urn:skein:store:${DATABASE}`,
      },
    };
  };

  return {
    db: DATABASE,
    token,
    tokenFile,
    world,
    mcp,
    model,
    server,
    operator,
    dir,
    api,
    agentClient,
    /** Registers definitions (YAML texts). */
    async define(...definitions: string[]) {
      for (const definition of definitions) await api("/workflows/definitions", { definition });
    },
    /** Spawns an agent worker on queue `agents` serving `actions`; `name` keeps documents apart. */
    async worker(actions: Record<string, unknown>, name = "agents") {
      const doc = await writeJson(dir, `${name}.json`, { name, task_queue: "agents", actions });
      const w = spawnWorker(["agent", doc, "--endpoint", server.grpc!, "--token-file", tokenFile]);
      workers.push(w);
      return w;
    },
    async start(name: string, input: unknown): Promise<string> {
      return (await api("/workflows/start", { name, input })).workflow_id;
    },
    async ended(workflowId: string) {
      return until(`${workflowId} to end`, async () => {
        const r = await api("/workflows/describe", { workflow_id: workflowId });
        return r.run.status === "Running" ? undefined : r.run;
      });
    },
    async describe(workflowId: string) {
      return api("/workflows/describe", { workflow_id: workflowId });
    },
    /** The live attempt of a run, once the worker announced it. */
    async live(workflowId: string): Promise<Attempt> {
      return until(`a live attempt of ${workflowId}`, async () => {
        const r = await api("/workflows/attempts", { workflow_id: workflowId });
        const a = r.attempts.at(-1);
        return a && { run_id: a.run_id, activity_id: a.activity_id, attempt: a.attempt };
      });
    },
    async transcript(workflowId: string, a: Attempt): Promise<Record<string, unknown>[]> {
      const r = await api("/workflows/transcript", { workflow_id: workflowId, ...a });
      return r.entries;
    },
    async intervene(workflowId: string, a: Attempt, kind: object): Promise<string> {
      const r = await api("/workflows/intervene", { workflow_id: workflowId, ...a, kind });
      return r.outcome.outcome;
    },
    /** Waits until the model has been asked `n` times in all. */
    asked(n: number) {
      return until(`model request ${n}`, () => model.requests.length >= n);
    },
    /** A document on a branch, read by the operator (undefined: not there). */
    async read(collection: string, branch: string, key: string): Promise<unknown> {
      const got = (await operator("document.get", { collection, branch, key })) as {
        found: boolean;
        value?: unknown;
      };
      return got.found ? got.value : undefined;
    },
  };
}

export type StoreWorld = Awaited<ReturnType<typeof storeWorld>>;

/** One step `a`: the agent action `action` on queue `agents`, `max_attempts` tries. */
export function agentFlow(name: string, action: string, maxAttempts = 1): string {
  return `name: ${name}\ntask_queue: agents\nretry: { max_attempts: ${maxAttempts}, initial_backoff_ms: 10 }\nsteps:\n  - { id: a, call: { action: ${action}, input: input } }\noutput: steps.a\n`;
}
