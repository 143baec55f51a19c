/**
 * The import rules between roles (biome.json's `noRestrictedImports` overrides), checked by
 * running Biome on a probe file placed in each folder: a forbidden import must fail the lint
 * that CI runs, and the allowed exceptions must pass it.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIOME = fileURLToPath(
  new URL("../../node_modules/@biomejs/biome/bin/biome", import.meta.url),
);

interface Case {
  readonly folder: string;
  readonly from: string;
  readonly allowed: boolean;
}

const CASES: readonly Case[] = [
  { folder: "src/worker", from: "../workflow/errors.ts", allowed: false },
  { folder: "src/worker/kinds", from: "../../workflow/agents/hub.ts", allowed: false },
  { folder: "src/worker", from: "../store/errors.ts", allowed: false },
  { folder: "src/worker", from: "../protocol/attempt.ts", allowed: true },
  { folder: "src/protocol", from: "../workflow/errors.ts", allowed: false },
  { folder: "src/protocol", from: "../worker/runtime.ts", allowed: false },
  { folder: "src/workflow", from: "../worker/runtime.ts", allowed: false },
  { folder: "src/workflow/engine", from: "../../worker/agent-link.ts", allowed: false },
  { folder: "src/workflow", from: "../worker/document.ts", allowed: true },
  { folder: "src/workflow", from: "../worker/verb.ts", allowed: true },
  { folder: "src/workflow", from: "../store/errors.ts", allowed: false },
  { folder: "src/workflow", from: "../protocol/attempt.ts", allowed: true },
  // The shared persistence code names no backend: differences go in its Dialect.
  { folder: "src/workflow/persistence/sql", from: "../sqlite/driver.ts", allowed: false },
  { folder: "src/workflow/persistence/sql", from: "../postgres/dialect.ts", allowed: false },
  { folder: "src/workflow/persistence/sql", from: "node:sqlite", allowed: false },
  { folder: "src/workflow/persistence/sql", from: "pg", allowed: false },
  { folder: "src/workflow/persistence/sql", from: "../../../store/errors.ts", allowed: false },
  { folder: "src/workflow/persistence/sql", from: "../store.ts", allowed: true },
  { folder: "src/workflow/persistence/sql", from: "../../errors.ts", allowed: true },
  { folder: "src/store", from: "../workflow/errors.ts", allowed: false },
  { folder: "src/store", from: "../worker/runtime.ts", allowed: false },
];

function lint(path: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [BIOME, "lint", "--colors=off", path], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe("imports between roles", () => {
  for (const c of CASES) {
    test(`${c.folder} ${c.allowed ? "may" : "may not"} import ${c.from}`, async () => {
      const path = `${c.folder}/zz-import-probe-${process.pid}.ts`;
      await writeFile(
        new URL(path, `file://${ROOT}`),
        `import * as probe from "${c.from}";\n\nexport const probed = probe;\n`,
      );
      try {
        const r = lint(path);
        if (c.allowed) assert.equal(r.status, 0, r.output);
        else {
          assert.notEqual(r.status, 0, r.output);
          assert.match(r.output, /noRestrictedImports/);
        }
      } finally {
        await rm(new URL(path, `file://${ROOT}`), { force: true });
      }
    });
  }
});
