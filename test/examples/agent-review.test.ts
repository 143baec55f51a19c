// examples/agent-review end to end, with real processes (skein-idp, skein-store serve and
// mcp-http, skein serve, the example's agent worker document against the scripted model, its
// reviewer module worker): the agent writes on its run's branch, a `review` signal approves
// and the reviewer's merge lands on main, the run completing with the merge's version; a
// reject runs the agent again on the same branch with the note in its input, then approval
// merges the reworked branch.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseDocumentText } from "../../src/common/document-text.ts";
import { until } from "../support/until.ts";
import { spawnWorker } from "../support/worker-endpoint.ts";
import { storeWorld } from "../worker/kinds/agent/store-world.ts";

const EXAMPLE = fileURLToPath(new URL("../../examples/agent-review/", import.meta.url));

const w = await storeWorld();
await w.operator("collections.create", { collection: "notes" });
await w.operator("document.put", { collection: "notes", key: "readme", value: "main" });
// The grants docs/agents.md gives: the agent reads main and owns agent-* branches; the
// reviewer writes main and reads the agents' branches it merges from.
const agentAuth = await w.agentClient("agent-writer", [
  ["read", `db/${w.db}/c/notes/b/main`],
  ["admin", `db/${w.db}/c/notes/b/agent-*`],
]);
const reviewerAuth = await w.agentClient("reviewer", [
  ["write", `db/${w.db}/c/notes/b/main`],
  ["read", `db/${w.db}/c/notes/b/agent-*`],
]);

// The example's agent document, pointed at this test's processes (its integers as numbers).
const parsed = parseDocumentText(await readFile(join(EXAMPLE, "agents.yaml"), "utf8"), "yaml", "x");
const doc = JSON.parse(
  JSON.stringify(parsed, (_key, value) => (typeof value === "bigint" ? Number(value) : value)),
) as {
  actions: {
    writer: { agent: Record<string, unknown> & { mcp: { store: Record<string, unknown> } } };
  };
};
const writer = doc.actions.writer.agent;
writer.base_url = w.model.url;
writer.mcp.store.url = w.mcp.url.href;
writer.mcp.store.auth = agentAuth;
await w.worker(doc.actions);
const reviewer = spawnWorker(
  [
    "module",
    join(EXAMPLE, "reviewer.yaml"),
    "--endpoint",
    w.server.grpc!,
    "--token-file",
    w.tokenFile,
  ],
  {
    REVIEW_MCP_URL: w.mcp.url.href,
    REVIEW_ISSUER: w.world.idp.issuer,
    REVIEW_CLIENT_ID: "reviewer",
    REVIEW_SECRET_FILE: reviewerAuth.client_credentials.secret_file,
    REVIEW_DATABASE: w.db,
    REVIEW_COLLECTION: "notes",
  },
);
after(async () => {
  reviewer.kill("SIGKILL");
  await reviewer.exited;
});
await w.define(await readFile(join(EXAMPLE, "review.yaml"), "utf8"));

const put = (id: string, value: string) => ({
  id,
  name: "store_document_put",
  arguments: JSON.stringify({ collection: "notes", key: "greeting", value }),
});

const signal = (workflowId: string, payload: object) =>
  w.api("/workflows/signal", { workflow_id: workflowId, signal: "review", payload });

test("approve: the agent's branch is merged and the run completes with the merge's version", async () => {
  w.model.push({ tool_calls: [put("c1", "hello")] }, { content: "Wrote a greeting." });
  const id = await w.start("agent_review", { task: "Add a greeting note" });
  const branch = `agent-${id}`;
  // The person reviews before deciding: the change is on the branch, not on main.
  await until("the agent's write", () =>
    w.read("notes", branch, "greeting").catch(() => undefined),
  );
  assert.equal(await w.read("notes", "main", "greeting"), undefined);
  const described = await w.describe(id);
  assert.equal(
    described.workspaces[0].review_url,
    `https://door.example/s/shop/c/notes/compare/main...${branch.replaceAll(".", "%2E")}`,
  );
  await signal(id, { decision: "approve", message: "Looks good" });
  const run = await w.ended(id);
  assert.equal(run.status, "Completed", JSON.stringify(run) + reviewer.stderr());
  assert.equal(await w.read("notes", "main", "greeting"), "hello");
  const head = (await w.operator("history.list", { collection: "notes", limit: 1 })) as {
    rows: { version: number; message?: string }[];
  };
  assert.deepEqual(run.output, {
    branch,
    into: "main",
    version: head.rows[0]!.version,
    outcome: run.output.outcome,
  });
});

test("reject: the note reaches the agent's next round on the same branch, then approval merges it", async () => {
  const seen = w.model.requests.length;
  w.model.push(
    { tool_calls: [put("r1", "hi")] },
    { content: "Wrote a greeting." },
    { tool_calls: [put("r2", "bonjour")] },
    { content: "Said it in French." },
  );
  const id = await w.start("agent_review", { task: "Add a greeting note" });
  const branch = `agent-${id}`;
  await until("the first round", () => w.read("notes", branch, "greeting").catch(() => undefined));
  await signal(id, { decision: "reject", note: "Say hello in French" });
  // The rework round is a child run of the same definition, on the same branch.
  await w.asked(seen + 3);
  const rework = w.model.requests[seen + 2]!.messages.find((m) => m.role === "user")!;
  assert.match(String(rework.content), /Say hello in French/);
  assert.match(String(rework.content), new RegExp(branch));
  await until(
    "the second round",
    async () => (await w.read("notes", branch, "greeting")) === "bonjour" || undefined,
  );
  const child = await until("the rework run", async () => {
    const page = await w.api("/workflows/list", { definition: "agent_review", status: "Running" });
    return page.runs.find((r: { workflow_id: string }) => r.workflow_id !== id);
  });
  const childSpaces = (await w.describe(child.workflow_id)).workspaces;
  assert.deepEqual(
    childSpaces.map((s: { branch: string }) => s.branch),
    [branch],
  );
  assert.equal(await w.read("notes", "main", "greeting"), "hello");
  await signal(child.workflow_id, { decision: "approve" });
  const run = await w.ended(id);
  assert.equal(run.status, "Completed", JSON.stringify(run) + reviewer.stderr());
  assert.equal(run.output.branch, branch);
  assert.equal(await w.read("notes", "main", "greeting"), "bonjour");
});
