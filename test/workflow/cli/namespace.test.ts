import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  adminToken,
  type ServerProcess,
  skein,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

describe("skein namespace create|list against a running server", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let admin: string;

  before(async () => {
    dir = await tempDir();
    server = await startServe(await writeConfig(dir.path, '[namespaces]\nauto_create = "closed"'));
    admin = await adminToken(dir.path);
  });
  after(async () => {
    await server?.stop();
    await dir?.remove();
  });

  // Text output, as a person sees it (piped output defaults to JSON: see the output tests).
  const ns = (args: string[], env: Record<string, string> = {}) =>
    skein(["namespace", ...args, "--server", server.url, "-o", "text"], env);

  test("create prints created, then already exists (name trimmed)", () => {
    const first = ns(["create", "  cli-one ", "--token", admin]);
    assert.equal(first.status, 0, first.stderr);
    assert.equal(first.stdout, "created namespace cli-one\n");
    const again = ns(["create", "cli-one", "--token", admin]);
    assert.equal(again.stdout, "namespace cli-one already exists\n");
  });

  test("SKEIN_TOKEN is used when --token is absent; list prints one name per line", () => {
    assert.equal(ns(["create", "cli-two"], { SKEIN_TOKEN: admin }).status, 0);
    const r = ns(["list"], { SKEIN_TOKEN: admin });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split("\n"), ["cli-one", "cli-two"]);
  });

  test("list --records prints one JSON record per line, only granted ones", async () => {
    const token = await tokenFor(dir.path, { namespaces: ["cli-two"] });
    const r = skein(["namespace", "list", "--records", "-s", server.url, "-t", token]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 1);
    assert.equal(lines[0].name, "cli-two");
    assert.deepEqual(lines[0].settings, {
      max_in_flight_activities: 1024,
      ceiling_in_force: false,
    });
  });

  test("a server refusal prints its code and exits 1", async () => {
    const token = await tokenFor(dir.path, { namespaces: ["x"] });
    const denied = ns(["create", "y", "--token", token]);
    assert.equal(denied.status, 1);
    assert.match(denied.stderr, /^skein: forbidden: /);
    const empty = ns(["create", "   ", "--token", admin]);
    assert.equal(empty.status, 1);
    assert.match(empty.stderr, /^skein: invalid_namespace_name: name: must not be empty/);
    const bad = ns(["list", "--token", "nonsense"]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /^skein: unauthenticated: /);
  });

  test("usage mistakes exit 2", () => {
    const env = { SKEIN_TOKEN: "" };
    assert.equal(ns(["create"], { SKEIN_TOKEN: admin }).status, 2);
    assert.equal(ns(["rename", "a"], { SKEIN_TOKEN: admin }).status, 2);
    const noToken = ns(["list"], env);
    assert.equal(noToken.status, 2);
    assert.match(noToken.stderr, /SKEIN_TOKEN/);
  });

  test("an unreachable server exits 1 naming it", () => {
    const r = skein(["namespace", "list", "--server", "http://127.0.0.1:1", "--token", admin]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^skein: cannot reach http:\/\/127\.0\.0\.1:1/);
  });
});
