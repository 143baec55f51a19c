import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { exactNumbers, listText } from "../../../src/workflow/http/json.ts";
import { runJson, runText } from "../../../src/workflow/http/run-json.ts";
import type { RunRecord } from "../../../src/workflow/persistence/workflows.ts";

const base: RunRecord = {
  namespace: "default",
  workflowId: "0190a4b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b",
  runId: "0190a4b2-7c3d-7e4f-8a9b-0c1d2e3f4a5c",
  definitionVersion: "sha256:ab",
  definitionName: "bench",
  status: "Running",
  startedAt: 1_780_000_000_123,
  updatedAt: 1_780_000_000_456,
  endedAt: null,
  outputJson: null,
  failure: null,
};

// runText writes describe's run without the reply serializer; it must be the very text the
// serializer writes for runJson(run), whatever the run holds.
describe("runText is the reply serializer's runJson", () => {
  const rows: [label: string, run: RunRecord][] = [
    ["a live run", base],
    [
      "a completed run with exact numbers, unicode and escapes in its output",
      {
        ...base,
        status: "Completed",
        endedAt: 1_780_000_001_000,
        outputJson: JSON.stringify({
          big: 1, // replaced below by a u64 the lossless parse keeps
          text: 'é "quoted" \\ \u2028 \ud800',
          list: [1.5, -0, 1e21, null, true, {}],
        }).replace('"big":1', '"big":18446744073709551615'),
      },
    ],
    [
      "a completed run whose output is a string",
      { ...base, status: "Completed", outputJson: '"done"' },
    ],
    [
      "a failed run",
      {
        ...base,
        status: "Failed",
        endedAt: 1_780_000_001_000,
        failure: { code: "activity_failed", message: 'step "s0" \n failed' },
      },
    ],
    [
      "odd names",
      { ...base, namespace: 'ns "q" \\', definitionName: "", definitionVersion: "sha256:\u00e9" },
    ],
  ];
  for (const [label, run] of rows) {
    test(label, () => assert.equal(runText(run), JSON.stringify(runJson(run), exactNumbers)));
  }
});

describe("listText", () => {
  test("the empty list and a list are written as the serializer writes them", () => {
    assert.equal(listText([]), "[]");
    const items = [{ a: 1n, b: "x" }, null];
    assert.equal(listText(items), JSON.stringify(items, exactNumbers));
  });
});
