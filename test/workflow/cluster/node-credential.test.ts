// The task relay's node-to-node routes take only a cluster node's own credential. Before, any
// bearer holding every namespace opened them, so a token from `skein token issue
// --all-namespaces` could complete a live activity with a forged output (the run ended
// Completed with it). Here the forge is replayed with bearers from `skein token issue`
// (every namespace; the worker grant; the admin token with every grant) against every relay
// route of every node: each is 403 and the run is untouched. A node credential, minted from
// the same key, is accepted.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { loadSigningKey } from "../../../src/workflow/auth/keys.ts";
import { issueNodeToken } from "../../../src/workflow/auth/tokens.ts";
import { postgresRequired } from "../../support/postgres.ts";
import { call, skein } from "../support/server.ts";
import { clusterFixture, until } from "./nodes.ts";

const skip = await postgresRequired();

const LONG = `name: long
task_queue: q
steps:
  - { id: one, call: { action: effect, input: "{ 'key': 'long/1', 'ms': 600000 }" } }
output: steps.one
`;

const RELAY_ROUTES = ["/cluster/relay/event", "/cluster/relay/release", "/cluster/relay/offer"];

function issued(config: string, ...grants: string[]): string {
  const r = skein(["token", "issue", "--config", config, "--subject", "forger", ...grants]);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

describe("cluster relay routes: node credential only", { skip }, () => {
  test("bearers from skein token issue get 403 on every relay route of every node; a node credential is accepted", async (t) => {
    const cluster = await clusterFixture(t);
    const nodes = [await cluster.start(0), await cluster.start(1)];
    await cluster.settled();
    await cluster.worker(0, "w0");
    const admin = await cluster.token();
    const defined = await call(nodes[0]!.url, "POST", "/workflows/definitions", {
      token: admin,
      body: { definition: LONG },
    });
    assert.equal(defined.status, 200, JSON.stringify(defined.body));
    // Started on n0 without an id: the run is in n0's shard, its attempt at n0's worker.
    const started = await call(nodes[0]!.url, "POST", "/workflows/start", {
      token: admin,
      body: { name: "long", input: {} },
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const workflowId = started.body.workflow_id as string;
    const ref = { run_id: started.body.run_id as string, activity_id: 1, attempt: 1 };
    await until("the attempt to run", async () =>
      (await cluster.effects()).has("long/1") ? true : undefined,
    );
    const ctx = { namespace: "home", taskQueue: "q", workerName: "w0", sessionId: "forged" };
    const bodies: Record<string, object> = {
      "/cluster/relay/event": {
        type: "completed",
        refs: [ref],
        output: JSON.stringify({ forged: true }),
        ctx,
      },
      "/cluster/relay/release": { ref, reason: "forged" },
      "/cluster/relay/offer": {
        owner: "n1",
        task: {
          ref,
          namespace: "home",
          taskQueue: "q",
          workflowId,
          action: "effect",
          inputJson: "{}",
          startToCloseMs: 0,
          heartbeatMs: 0,
        },
      },
    };
    const config = join(cluster.dir, "n0", "skein.toml");
    const bearers = {
      "--all-namespaces": issued(config, "--all-namespaces"),
      "--worker": issued(config, "--namespace", "home", "--worker"),
      "every grant": issued(config, "--all-namespaces", "--worker", "--deploy"),
      admin,
    };
    for (const [i, node] of nodes.entries()) {
      for (const path of RELAY_ROUTES) {
        for (const [name, token] of Object.entries(bearers)) {
          const r = await call(node.url, "POST", path, { token, body: bodies[path]! });
          assert.equal(r.status, 403, `${name} on n${i} ${path}: ${JSON.stringify(r.body)}`);
          assert.equal(r.body.error.code, "forbidden");
        }
      }
    }
    const running = await call(nodes[0]!.url, "POST", "/workflows/describe", {
      token: admin,
      body: { workflow_id: workflowId },
    });
    assert.equal(running.body.run.status, "Running", JSON.stringify(running.body));
    // The relay still works with what nodes present: n1's credential, minted from the key.
    const key = await loadSigningKey(join(cluster.dir, "n0", "data"));
    const node = await issueNodeToken(key.privateKey, "n1", 60);
    const released = await call(nodes[1]!.url, "POST", "/cluster/relay/release", {
      token: node,
      body: { ref: { ...ref, attempt: 9 }, reason: "nothing relayed" },
    });
    assert.deepEqual([released.status, released.body], [200, { released: true }]);
    const recorded = await call(nodes[0]!.url, "POST", "/cluster/relay/event", {
      token: node,
      body: bodies["/cluster/relay/event"]!,
    });
    assert.deepEqual([recorded.status, recorded.body], [200, { recorded: true }]);
    // And a node credential opens nothing else: it holds no grant.
    const listed = await call(nodes[0]!.url, "POST", "/workflows/describe", {
      token: node,
      body: { workflow_id: workflowId },
    });
    assert.equal(listed.status, 403);
  });
});
