// The repository's licence and contributor guide: Apache-2.0 in LICENSE and package.json, a
// CONTRIBUTING.md whose commands exist, and a .gitignore that keeps what a first `skein
// serve` writes in the checkout (skein.toml, skein-data/) out of commits.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (file: string) => readFile(`${ROOT}${file}`, "utf8");

test("LICENSE is the Apache License 2.0 and package.json says so", async () => {
  const licence = await read("LICENSE");
  assert.match(licence, /^\s*Apache License\s+Version 2\.0, January 2004/);
  assert.match(licence, /END OF TERMS AND CONDITIONS/);
  const pkg = JSON.parse(await read("package.json")) as { license: string };
  assert.equal(pkg.license, "Apache-2.0");
});

test("CONTRIBUTING.md names the dev loop's commands, and each npm script it names exists", async () => {
  const guide = await read("CONTRIBUTING.md");
  for (const command of ["npm install", "npm test", "npx tsc --noEmit -p .", "npx biome check ."]) {
    assert.ok(guide.includes(command), `CONTRIBUTING.md lacks ${command}`);
  }
  const pkg = JSON.parse(await read("package.json")) as { scripts: Record<string, string> };
  for (const [, script] of guide.matchAll(/npm run ([a-z][a-z-]*(?::[a-z-]+)?)\b(?!:)/g)) {
    assert.ok(pkg.scripts[script!] !== undefined, `npm run ${script} is not a script`);
  }
});

test(".gitignore keeps a first run's skein.toml and skein-data/ out of the checkout", () => {
  for (const path of ["skein.toml", "skein-data/admin.token", "skein-data/skein.db"]) {
    const r = spawnSync("git", ["check-ignore", "--no-index", "-q", path], { cwd: ROOT });
    assert.equal(r.status, 0, `${path} is not ignored`);
  }
});
