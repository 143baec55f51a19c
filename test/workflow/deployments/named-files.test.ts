// Files a deployment names, against the real `skein serve`: a
// worker document or token file is read only if it is a regular file of bounded size, in
// bounded time; refusals name the file and never show its contents; the server's own
// signing key, admin token and other private files of its data dir are refused as worker
// credentials.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { MAX_WORKER_DOCUMENT_BYTES } from "../../../src/worker/document.ts";
import { writeJson } from "../../support/worker-endpoint.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

describe("files named by a deployment are read with bounds", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess;
  let admin: string;
  let document: string;
  let token: string;
  let dataDir: string;

  before(async () => {
    dir = await tempDir();
    server = await startServe(await writeConfig(dir.path, "[deployments]\nenabled = true"));
    admin = await adminToken(dir.path);
    dataDir = join(dir.path, "data");
    document = await writeJson(dir.path, "worker.json", {
      name: "w",
      task_queue: "q",
      actions: { echo: { command: ["cat"] } },
    });
    token = join(dir.path, "worker.token");
    await writeFile(token, "x.y.z\n");
  });
  after(async () => {
    await server?.stop();
    await dir?.remove();
  });

  const put = (verb: string[]) =>
    call(server.url, "PUT", "/worker-deployments/files", {
      token: admin,
      body: {
        artifact: { type: "builtin", verb: ["worker", "exec", ...verb] },
        namespaces: ["default"],
        task_queue: "q",
        desired: "stopped",
      },
    });

  async function refused(verb: string[], reason: RegExp, secret?: string) {
    const r = await put(verb);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error.code, "invalid_deployment");
    assert.match(r.body.error.message, reason);
    if (secret !== undefined)
      assert.ok(!r.body.error.message.includes(secret), r.body.error.message);
    return r;
  }

  test("a YAML file that is not a worker document: named, its keys never shown", async () => {
    const shadow = join(dir.path, "shadow");
    await writeFile(shadow, "root:*:SECRETHASH:0:99999:7:::\ndaemon:*:SECRETTOO:0:99999:7:::\n");
    await refused([shadow], /shadow: not a worker document/, "SECRET");
  });

  test("a JSON file that is not a worker document: its keys never shown", async () => {
    const file = await writeJson(dir.path, "keys.json", { AWS_SECRET_KEY: "abc" });
    await refused([file], /keys\.json: not a worker document/, "AWS_SECRET_KEY");
  });

  test("a syntax error names the position, never the text", async () => {
    const json = join(dir.path, "bad.json");
    await writeFile(json, "Qsecret");
    // "secret", not "Q": the temporary directory's random name may hold any letter.
    const r = await refused([json], /bad\.json: not valid JSON/, "secret");
    assert.doesNotMatch(r.body.error.message, /'Q'/);
    const yaml = join(dir.path, "bad.yaml");
    await writeFile(yaml, "a: *secretalias\n");
    await refused([yaml], /bad\.yaml: not valid YAML/, "secretalias");
  });

  test("a worker document's own refusals still name the field", async () => {
    const file = await writeJson(dir.path, "half.json", {
      name: "w",
      task_queue: "q",
      actions: {},
    });
    await refused([file], /actions: must not be empty/);
  });

  test("/dev/zero is refused at once: not a regular file", { timeout: 20_000 }, async () => {
    await refused(["/dev/zero"], /\/dev\/zero.*not a regular file/);
  });

  test("a FIFO is refused at once, and the server keeps answering", {
    timeout: 20_000,
  }, async () => {
    const fifo = join(dir.path, "fifo.yaml");
    execFileSync("mkfifo", [fifo]);
    await Promise.all([1, 2, 3, 4, 5].map(() => refused([fifo], /not a regular file/)));
    await refused([document, "--token-file", fifo], /not a regular file/);
    const health = await call(server.url, "GET", "/health");
    assert.equal(health.status, 200);
  });

  test("a document over the size cap is refused", async () => {
    const big = join(dir.path, "big.yaml");
    await writeFile(big, `# ${"x".repeat(MAX_WORKER_DOCUMENT_BYTES)}\n`);
    await refused([big], /is larger than/);
  });

  test("a token file that is a device is refused", async () => {
    await refused([document, "--token-file", "/dev/zero"], /not a regular file/);
  });

  const credentials: [label: string, path: () => string][] = [
    ["the server's admin token", () => join(dataDir, "admin.token")],
    ["the server's signing key", () => join(dataDir, "signing-key.pem")],
    ["the server's database", () => join(dataDir, "skein.db")],
    [
      "the data dir's own files through ..",
      () => join(dataDir, "deployments", "..", "admin.token"),
    ],
  ];
  for (const [label, path] of credentials) {
    test(`${label} as --token-file: 400 token_file_refused`, async () => {
      const r = await put([document, "--token-file", path()]);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, "token_file_refused");
    });
  }

  test("a symbolic link to the admin token is refused too", async () => {
    const link = join(dir.path, "innocent.token");
    await symlink(join(dataDir, "admin.token"), link);
    const r = await put([document, "--token-file", link]);
    assert.deepEqual([r.status, r.body.error.code], [400, "token_file_refused"]);
  });

  test("an ordinary token file is accepted", async () => {
    const r = await put([document, "--token-file", token]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const removed = await call(server.url, "DELETE", "/worker-deployments/files", { token: admin });
    assert.equal(removed.status, 200);
  });
});
