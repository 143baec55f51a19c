/**
 * `npm run bench:idp-server`: how fast the development IdP decides. A real `skein-idp serve`
 * on loopback with a few grants; one client asks single evaluations in a loop (evaluations/s,
 * p50/p99 of the round trip over a keep-alive connection), then batches of 1,000 record
 * evaluations (batches/s, evaluations/s, p50/p99). The store's goal that a decided get add at
 * most 0.3 ms p50 starts here. Nothing is asserted. (`bench:idp`, the store's benchmark with
 * idp on and off, is another script.)
 */

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { knob, percentile, runBench } from "./harness.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/idp", "bin/skein-idp.ts"];

const BIN = fileURLToPath(new URL("../bin/skein-idp.ts", import.meta.url));
const SINGLES = knob("BENCH_SINGLES", 3000, 50);
const BATCHES = knob("BENCH_BATCHES", 40, 3);
const BATCH = 1000;

const root = mkdtempSync(join(tmpdir(), "skein-bench-idp-"));
const dataDir = join(root, "data");
const cli = (...args: string[]) =>
  execFileSync(process.execPath, [BIN, ...args], { encoding: "utf8" }).trim();

const secret = cli("client", "add", "--data-dir", dataDir, "app", "--app", "shop");
for (const [subject, action, resource] of [
  ["client:app", "read", "db/other"],
  ["client:app", "write", "db/shop/c/notes/b/main/p/pub/"],
]) {
  cli(
    "grant",
    "--data-dir",
    dataDir,
    "--subject",
    subject!,
    "--action",
    action!,
    "--resource",
    resource!,
  );
}
const child = spawn(
  process.execPath,
  [BIN, "serve", "--data-dir", dataDir, "--listen", "127.0.0.1:0"],
  {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, SKEIN_LOG_LEVEL: "warn" },
  },
);
process.on("exit", () => {
  child.kill("SIGTERM");
  rmSync(root, { recursive: true, force: true });
});
const issuer = await new Promise<string>((resolve) => {
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes("\n")) resolve((JSON.parse(out.split("\n")[0]!) as { issuer: string }).issuer);
  });
});
const tokenResponse = await fetch(`${issuer}/token`, {
  method: "POST",
  headers: { authorization: `Basic ${Buffer.from(`app:${secret}`).toString("base64")}` },
  body: new URLSearchParams({ grant_type: "client_credentials", resource: "urn:skein:store:shop" }),
});
const token = ((await tokenResponse.json()) as { access_token: string }).access_token;
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
await fetch(`${issuer}/placement/v1/databases/shop/collections/notes/branches/main`, {
  method: "PUT",
  headers,
});

const record = (key: string) => ({
  type: "service.record",
  id: `shop/notes/main/${key}`,
  properties: { database: "shop", collection: "notes", branch: "main", key },
});

// node:http with a keep-alive agent, as the store's live permission client would use:
// fetch's own overhead would otherwise dominate a sub-millisecond round trip.
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(url: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers }, (res) => {
      res.on("data", () => {});
      res.on("end", () => resolve());
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function timed(url: string, body: string, rounds: number) {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await post(url, body);
    times.push(performance.now() - start);
  }
  const total = times.reduce((a, b) => a + b, 0) / 1000;
  return { times, total };
}

await runBench("idp-server", { measures: MEASURES }, [
  {
    name: "single evaluation",
    async run() {
      const body = JSON.stringify({
        subject: { type: "client", id: "app" },
        action: { name: "document.get" },
        resource: record("pub/a"),
      });
      await timed(`${issuer}/access/v1/evaluation`, body, Math.min(200, SINGLES));
      const { times, total } = await timed(`${issuer}/access/v1/evaluation`, body, SINGLES);
      return {
        evaluations_per_s: Math.round(SINGLES / total),
        p50_ms: percentile(times, 50),
        p99_ms: percentile(times, 99),
      };
    },
  },
  {
    name: `batch of ${BATCH} records`,
    async run() {
      const body = JSON.stringify({
        subject: { type: "client", id: "app" },
        action: { name: "document.get" },
        evaluations: Array.from({ length: BATCH }, (_, i) => ({
          resource: record(i % 2 === 0 ? `pub/${i}` : `private/${i}`),
        })),
      });
      await timed(`${issuer}/access/v1/evaluations`, body, Math.min(5, BATCHES));
      const { times, total } = await timed(`${issuer}/access/v1/evaluations`, body, BATCHES);
      return {
        evaluations_per_s: Math.round((BATCHES * BATCH) / total),
        batches_per_s: Math.round((BATCHES / total) * 10) / 10,
        p50_ms: percentile(times, 50),
        p99_ms: percentile(times, 99),
      };
    },
  },
]);
process.exit(0);
