import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { ERRORS, workflowError } from "../../src/workflow/errors.ts";

describe("workflow error catalogue", () => {
  test("every code is documented in docs/http-api.md with its status", async () => {
    const doc = await readFile(new URL("../../docs/http-api.md", import.meta.url), "utf8");
    for (const [code, status] of Object.entries(ERRORS)) {
      const row = new RegExp(`^\\|\\s*\`${code}\`\\s*\\|\\s*(${status}|—)\\s*\\|`, "m");
      assert.match(doc, row, `docs/http-api.md lists ${code}`);
    }
  });

  test("a catalogue error carries the catalogue's status", () => {
    for (const [code, status] of Object.entries(ERRORS)) {
      const error = workflowError(code as keyof typeof ERRORS, "m");
      assert.deepEqual(
        [error.code, error.status, error.toJSON()],
        [code, status, { code, message: "m" }],
      );
    }
  });
});
