// `agent` worker documents: agent actions and exec tools, their defaults, and refusals that
// name the field; the example under examples/agent decodes as shipped.

import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { decode } from "../../src/common/decode/index.ts";
import { inspectWorkerDocument, loadWorkerDocument } from "../../src/worker/document.ts";
import { agentSpec } from "../../src/worker/kinds/agent/spec.ts";
import { parseDefinition } from "../../src/workflow/definitions/index.ts";
import { tempDir } from "../support/worker-endpoint.ts";

async function write(value: unknown): Promise<string> {
  const path = join(await tempDir(), "agents.json");
  await writeFile(path, JSON.stringify(value));
  return path;
}

const agent = { base_url: "http://127.0.0.1:1/v1", model: "m" };

describe("agent worker documents", () => {
  test("agent actions and exec tools load as handlers", async () => {
    const doc = await loadWorkerDocument(
      "agent",
      await write({
        name: "a",
        task_queue: "q",
        actions: { assistant: { agent }, tool: { exec: { command: ["echo", "1"] } } },
      }),
    );
    assert.deepEqual([...doc.handlers.keys()].sort(), ["assistant", "tool"]);
  });

  test("agent defaults", () => {
    const r = decode(agentSpec, agent);
    assert.ok(r.ok);
    assert.equal(r.value.system, "");
    assert.equal(r.value.max_turns, 16);
    assert.equal(r.value.max_tokens, null);
    assert.equal(r.value.tools, undefined);
    assert.deepEqual(r.value.capabilities, [
      "Cancel",
      "InjectMessage",
      "PauseResume",
      "UpdateBudget",
      "RespondToApproval",
    ]);
  });

  const refused: [string, unknown, RegExp][] = [
    ["neither agent nor exec", {}, /exactly one of agent or exec/],
    ["both agent and exec", { agent, exec: { command: ["x"] } }, /exactly one of agent or exec/],
    ["unknown capability", { agent: { ...agent, capabilities: ["Fly"] } }, /capabilities\[0\]/],
    ["max_turns 0", { agent: { ...agent, max_turns: 0 } }, /max_turns/],
    ["max_tokens 0", { agent: { ...agent, max_tokens: 0 } }, /max_tokens/],
    ["approval maybe", { approval: "maybe", exec: { command: ["x"] } }, /approval/],
    ["tool not in the document", { agent: { ...agent, tools: ["nope"] } }, /agent\.tools: "nope"/],
  ];
  for (const [name, action, message] of refused) {
    test(`refused: ${name}`, async () => {
      const path = await write({ name: "a", task_queue: "q", actions: { x: action } });
      await assert.rejects(loadWorkerDocument("agent", path), message);
    });
  }

  test("the shipped example decodes", async () => {
    const dir = fileURLToPath(new URL("../../examples/agent/", import.meta.url));
    const doc = await inspectWorkerDocument("agent", join(dir, "agents.yaml"));
    assert.deepEqual(doc.actions.sort(), ["assistant", "lookup"]);
    const definition = parseDefinition(await readFile(join(dir, "ask.yaml"), "utf8"), "yaml");
    assert.equal(definition.name, "ask");
  });
});
