// Every failure code a builtin worker can report, and every refusal code of the worker
// stream, is documented in docs/workers.md: the codes are read from the source, so a new
// code without documentation fails here.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const docs = readFileSync(join(root, "docs/workers.md"), "utf8");

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(join(root, dir, f), "utf8"));
}

function codes(texts: string[], pattern: RegExp): string[] {
  const found = new Set<string>();
  for (const text of texts) for (const m of text.matchAll(pattern)) found.add(m[1]!);
  return [...found].sort();
}

describe("documented codes", () => {
  const failures = codes(sources("src/worker"), /new ActivityError\(\s*"([a-z_]+)"/g);
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
      assert.ok(docs.includes(`\`${code}\``), code));
  }

  const refusals = codes(sources("src/workflow/rpc"), /new RpcRefusal\(\s*"([a-z_]+)"/g);
  for (const code of refusals) {
    test(`stream refusal ${code} is in docs/workers.md`, () =>
      assert.ok(docs.includes(`\`${code}\``), code));
  }
});
