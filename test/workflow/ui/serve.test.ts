// The run console as `skein serve` serves it (no browser): /ui and its files without a
// bearer, each with its content type, the strict Content-Security-Policy and an ETag that
// revalidates to 304; unknown files 404; the API behind it still needs the bearer. And
// `skein ui`: a sign-in link whose fragment holds a short-lived token with the asked grants.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decodeJwt } from "jose";
import { UI_CSP } from "../../../src/workflow/ui/routes.ts";
import {
  call,
  type ServerProcess,
  skein,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

let dir: Awaited<ReturnType<typeof tempDir>>;
let config: string;
let server: ServerProcess;

before(async () => {
  dir = await tempDir();
  config = await writeConfig(dir.path, '[namespaces]\ndefault = "default"');
  server = await startServe(config);
});
after(async () => {
  await server?.stop();
  await dir?.remove();
});

describe("GET /ui", () => {
  test("serves the page and its files without a bearer, each with its type and the CSP", async () => {
    for (const [path, type] of [
      ["/ui", "text/html"],
      ["/ui/", "text/html"],
      ["/ui/n/default/runs/0190a6f4-1b2c-7d3e-8f40-123456789abc", "text/html"],
      ["/ui/app.js", "text/javascript"],
      ["/ui/ui.css", "text/css"],
      ["/ui/common/console.css", "text/css"],
      ["/ui/vendor/preact.mjs", "text/javascript"],
      ["/ui/vendor/hooks.mjs", "text/javascript"],
      ["/ui/vendor/htm.mjs", "text/javascript"],
    ]) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 200, path);
      assert.ok(response.headers.get("content-type")?.startsWith(type!), path);
      assert.equal(response.headers.get("content-security-policy"), UI_CSP, path);
      assert.equal(response.headers.get("x-content-type-options"), "nosniff");
      assert.equal(response.headers.get("x-frame-options"), "DENY");
      assert.equal(response.headers.get("referrer-policy"), "no-referrer");
      assert.equal(response.headers.get("cache-control"), "no-cache");
      assert.ok((await response.text()).length > 0, path);
    }
    assert.match(UI_CSP, /script-src 'self'(;|$)/);
    assert.doesNotMatch(UI_CSP, /unsafe-inline|unsafe-eval|https?:/);
  });

  test("the page has no inline script and loads nothing from another origin", async () => {
    const page = await (await fetch(`${server.url}/ui/`)).text();
    for (const [, attrs, body] of page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
      assert.match(attrs!, /src="\/ui\//);
      assert.equal(body!.trim(), "");
    }
    assert.doesNotMatch(page, /(src|href)="(https?:)?\/\//);
    // The hooks module imports Preact from the served copy (no import map is possible).
    const hooks = await (await fetch(`${server.url}/ui/vendor/hooks.mjs`)).text();
    assert.match(hooks, /from"\/ui\/vendor\/preact\.mjs"/);
  });

  test("an ETag revalidates to 304; an unknown file is 404 with the error body", async () => {
    const first = await fetch(`${server.url}/ui/app.js`);
    const etag = first.headers.get("etag");
    assert.match(etag ?? "", /^"[0-9a-f]{32}"$/);
    const again = await fetch(`${server.url}/ui/app.js`, { headers: { "if-none-match": etag! } });
    assert.equal(again.status, 304);
    const missing = await call(server.url, "GET", "/ui/nothing.js");
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, "route_not_found");
    const outside = await call(server.url, "GET", "/ui/..%2F..%2Fpackage.json");
    assert.equal(outside.status, 404);
  });

  test("the API the page calls still needs the bearer", async () => {
    assert.equal((await call(server.url, "POST", "/workflows/list", { body: {} })).status, 401);
  });
});

describe("skein ui", () => {
  test("prints a sign-in link with a short-lived token of the asked grants in its fragment", async () => {
    const r = skein(["ui", "--config", config, "--namespace", "default", "--subject", "dana"]);
    assert.equal(r.status, 0, r.stderr);
    const link = r.stdout.trim();
    const match = /^http:\/\/127\.0\.0\.1:7380\/ui\/#token=(.+)$/.exec(link);
    assert.ok(match, link);
    const token = decodeURIComponent(match[1]!);
    const claims = decodeJwt(token);
    assert.equal(claims.sub, "dana");
    assert.deepEqual(claims.ns, ["default"]);
    assert.equal(claims.exp! - claims.iat!, 15 * 60);
    const ok = await call(server.url, "POST", "/workflows/list", { token, body: {} });
    assert.equal(ok.status, 200);
    const other = await call(server.url, "POST", "/workflows/list", {
      token,
      body: { namespace: "other" },
    });
    assert.equal(other.status, 403);
  });

  test("--server names the address; every namespace by default; usage errors exit 2", () => {
    const r = skein(["ui", "--config", config, "--server", server.url, "--ttl", "90s"]);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.startsWith(`${server.url}/ui/#token=`));
    const token = decodeURIComponent(r.stdout.trim().split("#token=")[1]!);
    const claims = decodeJwt(token);
    assert.equal(claims.ns, "*");
    assert.equal(claims.exp! - claims.iat!, 90);
    for (const bad of [
      ["--namespace", "a", "--all-namespaces"],
      ["--ttl", "soon"],
      ["--server", "ftp://x"],
    ]) {
      assert.equal(skein(["ui", "--config", config, ...bad]).status, 2, bad.join(" "));
    }
  });
});
