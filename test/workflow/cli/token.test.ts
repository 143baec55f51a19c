import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { parseTtl } from "../../../src/workflow/cli/token.ts";
import {
  call,
  type ServerProcess,
  skein,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

describe("skein token issue", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let config: string;
  let server: ServerProcess;

  before(async () => {
    dir = await tempDir();
    config = await writeConfig(dir.path);
    server = await startServe(config);
  });
  after(async () => {
    await server?.stop();
    await dir?.remove();
  });

  test("prints a token the server accepts, with exactly the asked grants", async () => {
    const r = skein([
      "token",
      "issue",
      "--config",
      config,
      "--subject",
      "ops",
      "--namespace",
      "n1",
      "--namespace",
      "n2",
      "--ttl",
      "10m",
    ]);
    assert.equal(r.status, 0, r.stderr);
    const token = r.stdout.trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.deepEqual(
      (await call(server.url, "POST", "/namespaces", { token, body: { name: "n2" } })).body,
      { name: "n2", created: true },
    );
    assert.equal(
      (await call(server.url, "POST", "/namespaces", { token, body: { name: "n3" } })).status,
      403,
    );
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    assert.deepEqual(
      [claims.sub, claims.ns, claims.deploy, claims.worker, claims.exp - claims.iat],
      ["ops", ["n1", "n2"], false, false, 600],
    );
  });

  test("--all-namespaces --deploy --worker", () => {
    const r = skein([
      "token",
      "issue",
      "--config",
      config,
      "--subject",
      "root",
      "--all-namespaces",
      "--deploy",
      "--worker",
    ]);
    assert.equal(r.status, 0, r.stderr);
    const claims = JSON.parse(Buffer.from(r.stdout.trim().split(".")[1]!, "base64url").toString());
    assert.deepEqual(
      [claims.ns, claims.deploy, claims.worker, claims.exp - claims.iat],
      ["*", true, true, 86400],
    );
  });

  const usage: [label: string, args: string[]][] = [
    ["no --subject", []],
    ["blank --subject", ["--subject", " "]],
    ["bad --ttl", ["--subject", "a", "--ttl", "10"]],
    [
      "--namespace with --all-namespaces",
      ["--subject", "a", "--namespace", "x", "--all-namespaces"],
    ],
    ["unknown option", ["--subject", "a", "--admin"]],
  ];
  for (const [label, args] of usage) {
    test(`${label}: exit 2`, () => {
      assert.equal(skein(["token", "issue", "--config", config, ...args]).status, 2);
    });
  }

  test("a configuration whose server never ran: exit 1 with a hint", async () => {
    const other = await tempDir();
    try {
      const r = skein([
        "token",
        "issue",
        "--config",
        await writeConfig(other.path),
        "--subject",
        "a",
      ]);
      assert.equal(r.status, 1);
      assert.ok(r.stderr.includes(join(other.path, "data", "signing-key.pem")));
      assert.match(r.stderr, /start `skein serve` once/);
    } finally {
      await other.remove();
    }
  });

  const ttls: [string, number][] = [
    ["90s", 90],
    ["30m", 1800],
    ["12h", 43200],
    ["7d", 604800],
  ];
  for (const [text, seconds] of ttls) {
    test(`--ttl ${text} is ${seconds} seconds`, () => assert.equal(parseTtl(text), seconds));
  }
});
