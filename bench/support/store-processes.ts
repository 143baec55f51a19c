/**
 * The store side of the MCP benchmarks (bench:mcp, bench:agent-mcp) as real processes on
 * loopback: `skein-idp` with an admin client `agent` on the database, `skein-store serve`
 * with `idp` (and placement, so branches made by agents are placed) and `skein-store
 * mcp-http`, in a temporary folder removed at exit; collection `c` holds k0..k999. Children are killed when the benchmark
 * exits; `stop()` ends them cleanly first (a profile run, BENCH_PROF=DIR, writes their CPU
 * profiles then).
 */

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StoreClient } from "../../src/store/client/client.ts";

export const DATABASE = "bench";
export const bin = (name: string) =>
  fileURLToPath(new URL(`../../bin/${name}.ts`, import.meta.url));

export async function storeProcesses(name: string) {
  const root = mkdtempSync(join(tmpdir(), `skein-bench-${name}-`));
  const children: ChildProcess[] = [];
  process.on("exit", () => {
    for (const c of children) c.kill("SIGKILL");
    rmSync(root, { recursive: true, force: true });
  });
  const run = join(root, "run");
  mkdirSync(run);
  chmodSync(run, 0o700);
  const env = {
    ...process.env,
    XDG_RUNTIME_DIR: run,
    SKEIN_LOG_LEVEL: "info",
    ...(process.env.BENCH_PROF
      ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROF}` }
      : {}),
  };

  /** Spawns `args` and resolves with the first output matching `ready`. */
  const spawnUntil = (args: string[], ready: RegExp): Promise<RegExpExecArray> => {
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let text = "";
    return new Promise((resolve, reject) => {
      const look = (d: Buffer) => {
        text += String(d);
        const match = ready.exec(text);
        if (match !== null) resolve(match);
      };
      child.stdout!.on("data", look);
      child.stderr!.on("data", look);
      child.once("exit", (code) => reject(new Error(`${args[1]} exited ${code}: ${text}`)));
    });
  };

  const idpDir = join(root, "idp");
  const idpCli = (...args: string[]) => {
    const sub = ["client", "user", "group"].includes(args[0]!) ? 2 : 1;
    const argv = [...args.slice(0, sub), "--data-dir", idpDir, ...args.slice(sub)];
    const r = spawnSync(process.execPath, [bin("skein-idp"), ...argv], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(r.stderr);
    return r.stdout.trim();
  };
  const issuer = (
    await spawnUntil(
      [bin("skein-idp"), "serve", "--data-dir", idpDir, "--listen", "127.0.0.1:0"],
      /"issuer":"([^"]+)"/,
    )
  )[1]!;
  const secret = idpCli("client", "add", "agent");
  idpCli("grant", "--subject", "client:agent", "--action", "admin", "--resource", `db/${DATABASE}`);
  const appFile = join(root, "app.credential");
  writeFileSync(appFile, `app:${idpCli("client", "add", "app", "--app", DATABASE)}\n`, {
    mode: 0o600,
  });
  const token = await fetch(new URL("/token", issuer), {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`agent:${secret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: `grant_type=client_credentials&resource=urn:skein:store:${DATABASE}`,
  });
  const pass = ((await token.json()) as { access_token: string }).access_token;

  const service = {
    data_dir: join(root, "store"),
    branch_cache_bytes_per_shard: 8 << 20,
    max_frame: 1 << 20,
    max_clients: 64,
    max_page: 100,
    timeout_ms: 30_000,
    create: { shards: 4, cache_bytes_total: 64 << 20, executor_threads: 1 },
    idp: { issuer, database: DATABASE, placement_credential_file: appFile },
    mcp_http: { listen: "127.0.0.1:0", allowed_origins: [] },
  };
  const file = join(root, "service.json");
  writeFileSync(file, JSON.stringify(service));
  await spawnUntil([bin("skein-store"), "serve", file, "--create"], /store listening/);
  const port = (
    await spawnUntil([bin("skein-store"), "mcp-http", file], /"port":(\d+)[^\n]*listening/)
  )[1];
  const socketPath = join(run, "skein-store", "store.sock");
  // What both benchmarks read: collection `c` with k0..k999 on main.
  const setup = await StoreClient.connect(socketPath, { pass });
  await setup.call("collections.create", { collection: "c" });
  await setup.put(
    "c",
    Array.from({ length: 1_000 }, (_, i) => ({ key: `k${i}`, value: { i, text: "modest" } })),
  );
  await setup.close();

  return {
    root,
    env,
    children,
    spawnUntil,
    issuer,
    /** The `agent` client's secret and a pass of it for the database. */
    secret,
    pass,
    socketPath,
    mcpUrl: new URL(`http://127.0.0.1:${port}/mcp`),
    /** Ends every child with SIGTERM and waits for them. */
    stop: () =>
      Promise.all(
        children.map(
          (c) =>
            new Promise((resolve) => {
              if (c.exitCode !== null) return resolve(null);
              c.once("exit", resolve);
              c.kill("SIGTERM");
            }),
        ),
      ),
  };
}
