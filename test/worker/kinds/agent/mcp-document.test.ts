// An agent action's `mcp` servers in the worker document: decoded once at load, with
// refusals that name the field; credential files read then (named, never quoted); a branch
// expression compiled then.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { loadWorkerDocument } from "../../../../src/worker/document.ts";
import { refusal } from "../../../store/idp/support.ts";
import { tempDir } from "../../../support/worker-endpoint.ts";

const agent = { base_url: "http://127.0.0.1:1/v1", model: "m" };

async function load(store: Record<string, unknown>, files: Record<string, string> = {}) {
  const dir = await tempDir();
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const path = join(dir, "agents.json");
  const doc = {
    name: "a",
    task_queue: "q",
    actions: { w: { agent: { ...agent, mcp: { store } } } },
  };
  await writeFile(path, JSON.stringify(doc));
  return loadWorkerDocument("agent", path);
}

const url = "http://127.0.0.1:1/mcp";

test("an MCP server with a bearer file and a branch loads", async () => {
  const doc = await load(
    { url, auth: { bearer_file: "store.pass" }, branch: "'agent-' & workflow_id" },
    { "store.pass": "p\n" },
  );
  assert.ok(doc.handlers.has("w"));
});

test("refusals name the field", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ url: "ftp://x/" }, /actions\.w\.agent\.mcp\.store\.url: must be an http\(s\) URL/],
    [{ url, auth: { bearer_file: "a", client_credentials: {} } }, /client_credentials|exactly one/],
    [{ url, tools: ["bad name"] }, /tools\[0\]/],
    [{ url, branch: "'agent-' &" }, /actions\.w\.agent\.mcp: branch: not a JSONata expression/],
  ];
  for (const [store, message] of cases) {
    const error = await refusal(load(store));
    assert.equal(error.code, "worker_document_invalid");
    assert.match(error.message, message);
  }
});

test("an unreadable or multi-line credential file is named, never quoted", async () => {
  const missing = await refusal(load({ url, auth: { bearer_file: "absent.pass" } }));
  assert.equal(missing.code, "worker_document_invalid");
  assert.match(missing.message, /bearer_file .*absent\.pass/);
  const cc = (file: string) => ({
    url,
    auth: {
      client_credentials: { issuer: "http://127.0.0.1:1", client_id: "c", secret_file: file },
    },
  });
  const twoLines = await refusal(load(cc("s"), { s: "sekrit-one\nsekrit-two\n" }));
  assert.match(twoLines.message, /exactly one line/);
  assert.doesNotMatch(twoLines.message, /sekrit/);
});
