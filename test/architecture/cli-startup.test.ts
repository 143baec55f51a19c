// A client command of `skein` or `skein-store` is a process of its own, and the suite (and a
// user's shell) starts hundreds of them: loading the program must not load the server's
// modules, which only `serve` (and `mcp-http`) need and import when they run.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SERVER_ONLY = ["fastify", "pg", "prom-client", "lmdb", "@modelcontextprotocol/sdk"];

/** The bare package names a fresh process resolves while importing `module`. */
function packagesLoadedBy(module: string): string[] {
  const script = `
    import { registerHooks } from "node:module";
    const seen = new Set();
    registerHooks({ resolve(specifier, context, next) {
      if (!/^[.\\/]|^node:|^file:/.test(specifier)) seen.add(specifier);
      return next(specifier, context);
    } });
    await import(${JSON.stringify(module)});
    console.log(JSON.stringify([...seen]));
  `;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as string[];
}

for (const program of ["workflow/cli/program.ts", "store/cli/program.ts"]) {
  test(`src/${program} loads none of the server's packages`, () => {
    const url = new URL(`../../src/${program}`, import.meta.url).href;
    const loaded = packagesLoadedBy(url);
    assert.ok(loaded.length > 0, "the hook saw the program's imports");
    const server = loaded.filter((name) =>
      SERVER_ONLY.some((pkg) => name === pkg || name.startsWith(`${pkg}/`)),
    );
    assert.deepEqual(server, [], `${fileURLToPath(url)} loads ${server.join(", ")}`);
  });
}
