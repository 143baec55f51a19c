// Every failure code a builtin worker can report is declared once in src/worker/failures.ts,
// and docs/workers.md's failure table lists exactly those codes: a code without a row, or a
// row without a code, fails here. (The worker stream's refusals are the server's catalogue:
// test/workflow/errors.test.ts.)

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ACTIVITY_FAILURES, WORKER_REFUSALS, workerRefusal } from "../../src/worker/failures.ts";
import { handlerFailure } from "../../src/worker/handler.ts";
import { documentedCodes } from "../support/doc-tables.ts";

describe("documented codes", () => {
  const failures = Object.keys(ACTIVITY_FAILURES);
  const documented = documentedCodes("docs/workers.md", "## Failure codes");
  test("the worker reports at least the known failure codes", () => {
    for (const code of [
      "exit_status",
      "spawn_failed",
      "http_status",
      "cancelled",
      "start_to_close_timeout",
    ]) {
      assert.ok(failures.includes(code), code);
    }
  });
  for (const code of failures) {
    test(`failure code ${code} is in docs/workers.md`, () =>
      assert.ok(documented.includes(code), code));
  }
  for (const code of documented) {
    test(`documented failure code ${code} is in the catalogue`, () =>
      assert.ok(Object.hasOwn(ACTIVITY_FAILURES, code), code));
  }
  test("a module handler's own code is kept", () => {
    const error = handlerFailure("quota_exceeded", "m", { nonRetryable: true });
    assert.deepEqual(
      [error.code, error.message, error.nonRetryable],
      ["quota_exceeded", "m", true],
    );
  });
  const refusals = documentedCodes("docs/workers.md", "### Start-up refusals");
  test("start-up refusals and their doc table agree both ways", () =>
    assert.deepEqual([...refusals].sort(), Object.keys(WORKER_REFUSALS).sort()));
  test("a start-up refusal carries its code", () =>
    assert.equal(workerRefusal("token_file_invalid", "m").code, "token_file_invalid"));
});
