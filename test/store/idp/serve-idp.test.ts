// `skein-store serve` with `idp`, as real processes: which issuer faults refuse start-up with
// `endpoint_refused` and which with `contract_refused` (nothing written either way), and a
// run with the real skein-idp in which no pass, secret or app credential reaches a log line,
// a CLI output or a refusal.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type RequestListener } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { BIN } from "../cli/harness.ts";
import { addClient, agent, clientPass, DATABASE, runIdp } from "./support.ts";

const CORE = {
  branch_cache_bytes_per_shard: 1048576,
  max_frame: 1048576,
  max_clients: 8,
  max_page: 100,
  timeout_ms: 5000,
  create: { shards: 2, cache_bytes_total: 8388608, executor_threads: 1 },
};

async function setup(idp: Record<string, unknown>) {
  const dir = await mkdtemp(join(tmpdir(), "skein-serve-idp-"));
  const run = join(dir, "run");
  await mkdir(run, { recursive: true });
  await chmod(run, 0o700);
  await mkdir(join(dir, "data"));
  const file = join(dir, "service.json");
  await writeFile(file, JSON.stringify({ ...CORE, data_dir: join(dir, "data", "store"), idp }));
  return { dir, file, env: { XDG_RUNTIME_DIR: run, SKEIN_LOG_LEVEL: "info" } };
}

interface Proc {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) c.kill("SIGKILL");
});

function run(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let output = "";
  child.stdout!.on("data", (d) => {
    output += String(d);
  });
  child.stderr!.on("data", (d) => {
    output += String(d);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, output: () => output, exited };
}

async function plainServer(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => server.close());
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function refusedStart(issuer: string, code: string, text: RegExp) {
  const s = await setup({ issuer, database: DATABASE });
  const p = run(["serve", s.file, "--create"], s.env);
  assert.equal(await p.exited, 2, p.output());
  assert.match(p.output(), new RegExp(`skein-store serve: ${code}: idp\\.issuer: `));
  assert.match(p.output(), text);
  assert.deepEqual(await readdir(join(s.dir, "data")), [], "nothing was created");
}

test("start-up: nothing listening at the issuer is endpoint_refused", async () => {
  // Port 1 on loopback: nothing listens there, so the connection is refused.
  await refusedStart(
    "http://127.0.0.1:1",
    "endpoint_refused",
    /nothing answered .* \(unreachable\)/,
  );
});

test("start-up: an HTTP service that is not an OIDC issuer is contract_refused", async () => {
  const issuer = await plainServer((_req, res) => {
    res.statusCode = 404;
    res.end("not here");
  });
  await refusedStart(issuer, "contract_refused", /openid-configuration answered HTTP 404/);
});

test("start-up: an issuer without an AuthZEN configuration is contract_refused", async () => {
  let origin = "";
  const issuer = await plainServer((req, res) => {
    if (req.url === "/.well-known/openid-configuration") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ issuer: origin, jwks_uri: `${origin}/jwks` }));
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  origin = issuer;
  await refusedStart(issuer, "contract_refused", /authzen-configuration answered HTTP 404/);
});

test("start-up: a discovery document naming another issuer is contract_refused", async () => {
  const issuer = await plainServer((_req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ issuer: "https://elsewhere.example", jwks_uri: "x" }));
  });
  await refusedStart(issuer, "contract_refused", /names another issuer/);
});

test("serve with the real skein-idp: the CLI takes a pass; no pass or credential is ever shown", async () => {
  const idp = await runIdp();
  const appSecret = addClient(idp, "store-app", DATABASE);
  const s = await setup({ issuer: idp.issuer, database: DATABASE });
  const credentialFile = join(s.dir, "app.credential");
  await writeFile(credentialFile, `store-app:${appSecret}\n`, { mode: 0o600 });
  const config = JSON.parse(await readFile(s.file, "utf8")) as Record<string, unknown>;
  (config.idp as Record<string, unknown>).placement_credential_file = credentialFile;
  await writeFile(s.file, JSON.stringify(config));
  const server = run(["serve", s.file, "--create"], s.env);
  const socket = join(s.dir, "run", "skein-store", "store.sock");
  for (let i = 0; i < 400; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const c = connect(socket);
      c.once("connect", () => {
        c.destroy();
        resolve(true);
      });
      c.once("error", () => resolve(false));
    });
    if (up) break;
    assert.equal(server.child.exitCode, null, server.output());
    await new Promise((r) => setTimeout(r, 50));
  }
  const admin = await agent(idp, "cli-admin", [["admin", `db/${DATABASE}`]]);
  const passFile = join(s.dir, "pass");
  await writeFile(passFile, `${admin.pass}\n`, { mode: 0o600 });
  const outputs: string[] = [];
  const call = async (args: string[], env: Record<string, string> = {}) => {
    const p = run([...args, "--socket", socket], env);
    const code = await p.exited;
    outputs.push(p.output());
    return { code, output: p.output() };
  };
  const created = await call([
    "call",
    "collections.create",
    '{"collection":"c1"}',
    "--pass-file",
    passFile,
  ]);
  assert.equal(created.code, 0, created.output);
  const put = await call(["put", "c1", "k", '"v"'], { SKEIN_STORE_PASS: admin.pass });
  assert.equal(put.code, 0, put.output);
  const none = await call(["get", "c1", "k"]);
  assert.equal(none.code, 1);
  assert.match(none.output, /pass_required/);
  const reader = await agent(idp, "cli-reader", []);
  const denied = await call(["get", "c1", "k"], { SKEIN_STORE_PASS: reader.pass });
  assert.match(denied.output, /permission_denied/);
  const wrong = await clientPass(idp.issuer, "cli-admin", admin.secret, "other");
  const refused = await call(["get", "c1", "k"], { SKEIN_STORE_PASS: wrong });
  assert.match(refused.output, /pass_wrong_audience/);
  server.child.kill("SIGTERM");
  assert.equal(await server.exited, 0, server.output());
  const everything = [server.output(), ...outputs].join("\n");
  for (const secret of [admin.pass, reader.pass, wrong, appSecret, admin.secret]) {
    assert.ok(!everything.includes(secret), "a secret reached a log or an output");
    // Not even a recognisable part of it (a token's signature, say).
    assert.ok(!everything.includes(secret.slice(-24)));
  }
  assert.match(server.output(), /identity provider decides every act/);
});
