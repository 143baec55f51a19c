// Shared fixture of the agent end-to-end tests: the one-step `ask` definition whose step is
// an agent action, and a real `skein worker agent` process serving it against a model, with
// its worker token written to a file the way an operator would.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { spawnWorker, writeJson } from "../../support/worker-endpoint.ts";

/** A definition with a single agent step `a` (action `assistant`) on task queue `agents`. */
export const ASK =
  "name: ask\ntask_queue: agents\nretry: { max_attempts: 1 }\nsteps:\n  - { id: a, call: { action: assistant, input: input.q } }\noutput: steps.a\n";

export interface AgentWorker {
  /** The temp folder the token file and worker document go in. */
  dir: string;
  /** The server's gRPC address. */
  endpoint: string;
  /** A worker-granted bearer token. */
  token: string;
  /** The `actions` of the worker document (task queue `agents`). */
  actions: Record<string, unknown>;
  /** Serve this namespace instead of the default one. */
  namespace?: string;
}

/** Spawns `skein worker agent` for `w`; the caller kills it. */
export async function spawnAgentWorker(w: AgentWorker): Promise<ReturnType<typeof spawnWorker>> {
  const tokenFile = join(w.dir, "worker.token");
  await writeFile(tokenFile, `${w.token}\n`, { mode: 0o600 });
  const doc = await writeJson(w.dir, "agents.json", {
    name: "agents",
    task_queue: "agents",
    actions: w.actions,
  });
  const namespace = w.namespace === undefined ? [] : ["--namespace", w.namespace];
  return spawnWorker([
    "agent",
    doc,
    ...namespace,
    "--endpoint",
    w.endpoint,
    "--token-file",
    tokenFile,
  ]);
}
