/**
 * `npm run bench:idp`: what the identity provider's decisions cost the store. One run starts
 * the real `skein-idp` (a process on loopback) and two stores over the same data shape, one
 * without `idp` and one with it (app credential for live questions), and measures:
 *
 * - `document.get` from 1 and 8 clients: gets/s and p50/p99 latency, idp off and on;
 * - a `document.list` page of 1,000 records with per-record decisions: its latency and the
 *   requests it sent to the IdP (the goal is one batch round trip).
 *
 * Goal: a decided get adds at most 0.3 ms p50 over loopback. Nothing is asserted.
 *
 * `SKEIN_BENCH_IDP_PROFILE=DIR` also writes a CPU profile of `skein-idp` into DIR (the IdP
 * is stopped with SIGTERM so it writes one); run the bench itself under
 * `node --cpu-prof --cpu-prof-dir DIR` for the store's side of the round trip.
 */

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StoreClient } from "../src/store/client/client.ts";
import { createStore, ENGINE_DEFAULTS, openStore } from "../src/store/engine/index.ts";
import { connectIdp } from "../src/store/idp/discovery.ts";
import type { IdpGate } from "../src/store/idp/gate.ts";
import { startStoreServer } from "../src/store/transport/server.ts";
import { type Figures, knob, percentile, runBench } from "./harness.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/store/idp", "src/idp"];

const GETS_PER_CLIENT = knob("BENCH_GETS", 2_000, 50);
const LIST_PAGES = knob("BENCH_LIST_PAGES", 20, 2);
const DATABASE = "bench";
const PROFILE_DIR = process.env.SKEIN_BENCH_IDP_PROFILE;
const IDP_BIN = fileURLToPath(new URL("../bin/skein-idp.ts", import.meta.url));

const root = mkdtempSync(join(tmpdir(), "skein-bench-idp-"));
const children: ChildProcess[] = [];
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

const idpDir = join(root, "idp");
const idpCli = (...args: string[]) => {
  const sub = ["client", "user", "group"].includes(args[0]!) ? 2 : 1;
  const argv = [...args.slice(0, sub), "--data-dir", idpDir, ...args.slice(sub)];
  const r = spawnSync(process.execPath, [IDP_BIN, ...argv], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
};

const child = spawn(
  process.execPath,
  [
    ...(PROFILE_DIR === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR]),
    IDP_BIN,
    "serve",
    "--data-dir",
    idpDir,
    "--listen",
    "127.0.0.1:0",
  ],
  {
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, SKEIN_LOG_LEVEL: "warn" },
  },
);
children.push(child);
const issuer = await new Promise<string>((resolve) =>
  child.stdout!.once("data", (d) => resolve((JSON.parse(String(d)) as { issuer: string }).issuer)),
);
const appSecret = idpCli("client", "add", "bench-app", "--app", DATABASE);
const readerSecret = idpCli("client", "add", "reader");
idpCli("grant", "--subject", "client:reader", "--action", "read", "--resource", `db/${DATABASE}`);
const tokenResponse = await fetch(new URL("/token", issuer), {
  method: "POST",
  headers: {
    authorization: `Basic ${Buffer.from(`reader:${readerSecret}`).toString("base64")}`,
    "content-type": "application/x-www-form-urlencoded",
  },
  body: `grant_type=client_credentials&resource=urn:skein:store:${DATABASE}`,
});
const pass = ((await tokenResponse.json()) as { access_token: string }).access_token;

async function serve(name: string, gate: IdpGate | null) {
  const dir = join(root, name);
  await createStore(dir, { shards: 4, cacheBytesTotal: 64 << 20, executorThreads: 1 });
  const store = openStore({
    dataDir: dir,
    branchCacheBytesPerShard: 8 << 20,
    maxPage: 1_000,
    ...ENGINE_DEFAULTS,
  });
  store.createCollection("c");
  const records = Array.from({ length: 1_000 }, (_, i) => ({
    key: `k${String(i).padStart(4, "0")}`,
    value: { i, text: "a record of modest size" },
  }));
  store.put({ collection: "c", branch: "main" }, records);
  const socketPath = join(root, `${name}.sock`);
  const server = await startStoreServer(store, {
    socketPath,
    maxFrame: 16 << 20,
    maxClients: 64,
    timeoutMs: 30_000,
    idp: gate,
  });
  return { store, server, socketPath };
}

const gate = await connectIdp(
  { issuer, database: DATABASE, placement_credential_file: null },
  { credential: `bench-app:${appSecret}` },
);
const off = await serve("off", null);
const on = await serve("on", gate);

async function gets(socketPath: string, clients: number, withPass: boolean) {
  const conns = await Promise.all(
    Array.from({ length: clients }, () =>
      StoreClient.connect(socketPath, withPass ? { pass } : {}),
    ),
  );
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    conns.map(async (client, c) => {
      for (let i = 0; i < GETS_PER_CLIENT; i++) {
        const t = performance.now();
        await client.get("c", `k${String((i * 7 + c) % 1_000).padStart(4, "0")}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const client of conns) await client.close();
  return {
    perSecond: Math.round(latencies.length / seconds),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

const ms = (v: number) => Number(v.toFixed(3));

async function getCase(clients: number): Promise<Figures> {
  // Warm both paths (connections, JWKS, keep-alive sockets) before measuring.
  await gets(off.socketPath, clients, false);
  await gets(on.socketPath, clients, true);
  const a = await gets(off.socketPath, clients, false);
  const b = await gets(on.socketPath, clients, true);
  return {
    off_gets_per_s: a.perSecond,
    off_p50_ms: ms(a.p50),
    off_p99_ms: ms(a.p99),
    on_gets_per_s: b.perSecond,
    on_p50_ms: ms(b.p50),
    on_p99_ms: ms(b.p99),
    added_p50_ms: ms(b.p50 - a.p50),
  };
}

async function listCase(): Promise<Figures> {
  const lister = await StoreClient.connect(on.socketPath, { pass });
  const plainLister = await StoreClient.connect(off.socketPath);
  const listTimes: number[] = [];
  const plainTimes: number[] = [];
  let requests = 0;
  for (let i = 0; i < LIST_PAGES; i++) {
    let t = performance.now();
    await plainLister.call("document.list", { collection: "c", limit: 1_000 });
    plainTimes.push(performance.now() - t);
    const before = gate.requestsSent;
    t = performance.now();
    const page = (await lister.call("document.list", { collection: "c", limit: 1_000 })) as {
      rows: unknown[];
      denied: number;
    };
    listTimes.push(performance.now() - t);
    requests = Math.max(requests, gate.requestsSent - before);
    if (page.rows.length !== 1_000) throw new Error(`page of ${page.rows.length} rows`);
  }
  await lister.close();
  await plainLister.close();
  return {
    off_p50_ms: ms(percentile(plainTimes, 50)),
    on_p50_ms: ms(percentile(listTimes, 50)),
    on_p99_ms: ms(percentile(listTimes, 99)),
    idp_requests_per_page: requests,
  };
}

await runBench("idp", { measures: MEASURES }, [
  {
    name: `document.get, 1 client (${GETS_PER_CLIENT} gets), idp off and on`,
    run: () => getCase(1),
  },
  {
    name: `document.get, 8 clients (${GETS_PER_CLIENT} gets each), idp off and on`,
    run: () => getCase(8),
  },
  {
    name: `document.list page of 1,000 records (${LIST_PAGES} pages), idp off and on`,
    run: listCase,
  },
]);
await on.server.close();
await off.server.close();
gate.close();
await on.store.close();
await off.store.close();
if (PROFILE_DIR !== undefined) {
  // SIGKILL (the exit handler's) would lose the IdP's profile: it writes one as it stops.
  const stopped = new Promise((done) => child.once("exit", done));
  child.kill("SIGTERM");
  await stopped;
}
process.exit(0);
