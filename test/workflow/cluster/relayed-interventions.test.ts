// Interventions on an agent attempt the task relay placed with another node's worker. The
// run is started through n2, which has no worker for the queue, so it lives in n2's shard and
// its attempt is relayed to the agent worker connected to n0. Every node must list the
// attempt with the capabilities its action advertises, read its transcript, and steer it with
// the spec's outcomes (Applied, CapabilityNotSupported, StaleTarget) exactly as one node
// does. Before, n0 ignored the worker's announcement (its engine does not run the run), so
// every node listed the attempt with gRPC's ["Cancel"] alone, the transcript stayed empty and
// every intervention through any node was StaleTarget.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { startScriptedModel } from "../../../src/testing/scripted-model.ts";
import { postgresRequired } from "../../support/postgres.ts";
import { call } from "../support/server.ts";
import { clusterFixture, until } from "./nodes.ts";

const skip = await postgresRequired();

const ADVERTISED = ["Cancel", "InjectMessage", "PauseResume"];

const ASK = `name: ask
task_queue: agents
retry: { max_attempts: 1 }
steps:
  - { id: a, call: { action: assistant, input: input.q } }
output: steps.a
`;

interface Listed {
  run_id: string;
  activity_id: number;
  attempt: number;
  capabilities: string[];
}

describe("cluster mode: interventions on a relayed agent attempt", { skip }, () => {
  test("an attempt relayed from the run's node to the worker's node is listed, transcribed and steerable through every node", async (t) => {
    const model = await startScriptedModel();
    t.after(() => model.close());
    const cluster = await clusterFixture(t);
    const nodes = [await cluster.start(0), await cluster.start(1), await cluster.start(2)];
    await cluster.settled();
    const c = nodes[2]!;
    const token = await cluster.token();
    const defined = await call(c.url, "POST", "/workflows/definitions", {
      token,
      body: { definition: ASK },
    });
    assert.equal(defined.status, 200, JSON.stringify(defined.body));
    // The agent worker, and so its agent-transport connection, is at n0 only.
    await cluster.agentWorker(0, model.url, ADVERTISED);
    // The first model call is held until the cancel below aborts it, so the attempt is live
    // (and its loop not past that call) however long the listing and the pause take: a
    // second-long call let a loaded machine finish the attempt before the pause arrived.
    model.push(
      { tool_calls: [{ id: "c1", name: "echo", arguments: '{"x":1}' }], delay_ms: 120_000 },
      { content: "never asked" },
    );
    const started = await call(c.url, "POST", "/workflows/start", {
      token,
      body: { name: "ask", input: { q: "hello" } },
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const id = started.body.workflow_id as string;
    // The run lives in n2's shard; n2 has no agent worker, so its attempt was relayed to n0.
    const [row] = await cluster.sql<{ shard: number }>(
      `SELECT shard FROM "${cluster.schema}".workflow_runs WHERE workflow_id = $1`,
      [id],
    );
    assert.equal((await cluster.leases())[row!.shard]!.owner, "n2");
    await until("the model call", async () => (model.requests.length >= 1 ? true : undefined));

    // Every node lists the attempt with the capabilities the action advertises.
    let attempt: Listed | undefined;
    for (const [i, node] of nodes.entries()) {
      const listed = await until(`n${i} to list the agent attempt`, async () => {
        const r = await call(node.url, "POST", "/workflows/attempts", {
          token,
          body: { workflow_id: id },
        });
        const all = (r.body.attempts ?? []) as Listed[];
        return all.length === 1 && all[0]!.capabilities.length === ADVERTISED.length
          ? all
          : undefined;
      });
      assert.deepEqual(listed[0]!.capabilities, ADVERTISED, `n${i}`);
      attempt ??= listed[0];
      assert.deepEqual(listed[0], attempt, `n${i}`);
    }
    const target = attempt!;
    const intervene = async (i: number, kind: object, n = target.attempt) => {
      const r = await call(nodes[i]!.url, "POST", "/workflows/intervene", {
        token,
        body: {
          workflow_id: id,
          run_id: target.run_id,
          activity_id: target.activity_id,
          attempt: n,
          kind,
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.outcome.outcome as string;
    };
    const pause = { kind: "PauseResume", paused: true };
    const inject = (text: string) => ({
      kind: "InjectMessage",
      text,
      priority: { priority: "Normal" },
    });
    const budget = { kind: "UpdateBudget", max_tokens: null, max_turns: 3 };
    // Applied through every node: n0 holds the connection, n1 and n2 reach it.
    assert.equal(await intervene(1, pause), "Applied");
    assert.equal(await intervene(2, inject("via n2")), "Applied");
    assert.equal(await intervene(0, inject("via n0")), "Applied");
    assert.equal(await intervene(1, inject("via n1")), "Applied");
    // Not advertised: CapabilityNotSupported through every node.
    for (const i of [0, 1, 2]) assert.equal(await intervene(i, budget), "CapabilityNotSupported");
    // No such attempt: StaleTarget through every node.
    for (const i of [0, 1, 2]) {
      assert.equal(await intervene(i, inject("nobody"), target.attempt + 1), "StaleTarget");
    }

    // The transcript the worker sent through n0 reads the same on every node.
    for (const [i, node] of nodes.entries()) {
      const texts = await until(`n${i} to read the controls in the transcript`, async () => {
        const r = await call(node.url, "POST", "/workflows/transcript", {
          token,
          body: {
            workflow_id: id,
            run_id: target.run_id,
            activity_id: target.activity_id,
            attempt: target.attempt,
          },
        });
        const entries = (r.body.entries ?? []) as {
          type: string;
          control?: { kind: { kind: string; text?: string } };
        }[];
        const controls = entries.filter((e) => e.type === "control");
        return controls.length === 4 ? controls.map((e) => e.control!.kind.text ?? "") : undefined;
      });
      assert.deepEqual(texts, ["", "via n2", "via n0", "via n1"], `n${i}`);
    }

    // Cancel through the run's own node, which has no worker: the attempt ends with it.
    assert.equal(await intervene(2, { kind: "Cancel", reason: "enough" }), "Applied");
    const failed = await until("the run to end", async () => {
      const r = await call(c.url, "POST", "/workflows/describe", {
        token,
        body: { workflow_id: id, wait_ms: 2000 },
      });
      return r.body.run?.status === "Running" ? undefined : r.body.run;
    });
    assert.equal(failed.status, "Failed", JSON.stringify(failed));
    assert.match(JSON.stringify(failed), /cancelled: enough/);
    // Only the first model call was made: the loop was paused, then cancelled.
    assert.equal(model.requests.length, 1);
    // The attempt has ended: StaleTarget through every node.
    for (const i of [0, 1, 2]) assert.equal(await intervene(i, inject("late")), "StaleTarget");
  });
});
