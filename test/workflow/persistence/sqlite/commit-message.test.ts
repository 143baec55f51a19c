// An engine commit crosses to the storage thread packed into one flat array: unpacking it
// gives back every field of every append, in order, whatever the append holds.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { EncodedAppend } from "../../../../src/workflow/persistence/sql/run-commit.ts";
import {
  packCommit,
  unpackCommit,
} from "../../../../src/workflow/persistence/sqlite/commit-message.ts";

const id = (runId: string) => ({
  runId,
  workflowId: `w-${runId}`,
  namespace: "n",
  definitionVersion: "v",
});

const BATCH: EncodedAppend[] = [
  {
    ...id("started"),
    status: "Running",
    events: ['[{"type":"RunStarted"}]', '[{"type":"ActivityScheduled"}]'],
    count: 2,
    starts: true,
    firstAt: 1,
    lastAt: 2,
    end: null,
    outbox: [
      { activityId: 1, attempt: 1, state: "pending" },
      { activityId: 2, attempt: 3, state: "claimed" },
    ],
  },
  {
    ...id("outbox-only"),
    status: "Paused",
    events: [],
    count: 0,
    starts: false,
    firstAt: 0,
    lastAt: 0,
    end: null,
    outbox: [{ activityId: 4, attempt: 1, state: "done" }],
  },
  {
    ...id("completed"),
    status: "Completed",
    events: ['[{"type":"RunCompleted"}]'],
    count: 1,
    starts: false,
    firstAt: 5,
    lastAt: 5,
    end: { at: 5, output: '{"n":1.50}', failure: null },
    outbox: undefined,
  },
  {
    ...id("failed"),
    status: "Failed",
    events: ['[{"type":"RunFailed"}]'],
    count: 1,
    starts: false,
    firstAt: 6,
    lastAt: 6,
    end: { at: 6, output: null, failure: ["boom", ""] },
    outbox: [],
  },
];

test("a packed commit unpacks to the same appends, in order", () => {
  const message = packCommit(BATCH);
  assert.ok(
    message.every((v) => v === null || typeof v === "string" || typeof v === "number"),
    "only strings, numbers and nulls cross",
  );
  assert.deepEqual(unpackCommit(structuredClone(message)), BATCH);
  assert.deepEqual(unpackCommit(packCommit([])), []);
});
