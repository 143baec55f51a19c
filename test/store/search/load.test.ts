/**
 * Search work does not stall the store's other verbs: while the HNSW index of a
 * 100,000-record head is being built and 32 exact searches run, `document.get` keeps being
 * answered, each call promptly, and many of them before the exact searches are done. The
 * build and the exact scans run on the index thread; the event loop only reads the store
 * in short slices. (Before, the build ran on the loop in 50 ms steps and each exact search
 * decoded and scanned every vector on it: one 100,000-record exact search held the loop for
 * seconds, and a get waited behind all 32.)
 *
 * The embedding worker is bench/support/clustered-worker, a real process speaking the
 * worker protocol with synthetic 384-dimension vectors, so a walk of 100,000 records takes
 * seconds rather than the test model's minutes. Latencies are printed, and bounded only
 * far above what this asserts against (a stalled loop is seconds here).
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { serve, settled, tempRoot, until } from "./fixture.ts";

const RECORDS = 100_000;
const EXACT_SEARCHES = 32;
/** A get slower than this means the loop was held (a stalled loop holds it for seconds). */
const STALL_MS = 1000;
const WORKER = fileURLToPath(new URL("../../../bench/support/clustered-worker", import.meta.url));

test("document.get is answered while a 100,000-record build and 32 exact searches run", async (t) => {
  const served = await serve(
    {
      max_page: 1024,
      max_frame: 16 << 20,
      max_clients: 64,
      embed_worker: WORKER,
      embed_model_dir: await tempRoot(),
      embed_model_sha256: "c".repeat(64),
      embed_memory_bytes: 4 * 2 ** 30,
      embed_threads: 1,
      embed_batch_items: 256,
      embed_input_bytes: 8192,
      embed_tokens: 128,
      embed_frame_bytes: 64 << 20,
      embed_ready_ms: 120000,
      embed_call_ms: 120000,
      embed_waiting: 1024,
      embed_request_items: 1024,
      embed_page_records: 1024,
    },
    undefined,
    { SKEIN_SEARCH_TRACE: "1" },
  );
  try {
    const client = await served.client();
    await client.call("collections.create", { collection: "notes" });
    for (let at = 0; at < RECORDS; at += 1000) {
      const page = Array.from({ length: 1000 }, (_, i) => ({
        key: `k${String(at + i).padStart(6, "0")}`,
        value: { body: `c${(at + i) % 1000} s${at + i}` },
      }));
      await client.put("notes", page);
    }
    await client.embedEnable("notes", "body");
    await settled(client, "notes");
    // The first search at the head starts the build (it answers exactly meanwhile).
    await client.search("notes", "body", "c7 q1", { mode: "vector", values: false });
    const started = () =>
      served.logs().some((l) => l.msg === "search index update" && l.update === "build");
    await until(started, "the build's start");
    const searches = await Promise.all(Array.from({ length: 4 }, () => served.client()));
    let searching = true;
    const exact = Promise.all(
      Array.from({ length: EXACT_SEARCHES }, (_, i) =>
        searches[i % 4]!.search("notes", "body", `c${i} q${i}`, {
          mode: "vector",
          exact: true,
          values: false,
        }),
      ),
    ).finally(() => {
      searching = false;
    });
    const latencies: number[] = [];
    let during = 0;
    while (searching) {
      const start = performance.now();
      const got = await client.get("notes", "k000042");
      latencies.push(performance.now() - start);
      assert.deepEqual(got.value, { body: "c42 s42" });
      if (searching) during++;
    }
    const answers = await exact;
    const building = !served.logs().some((l) => l.msg === "search index built");
    latencies.sort((a, b) => a - b);
    const p = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    t.diagnostic(
      `${latencies.length} gets (${during} during the searches), p50 ${p(0.5).toFixed(1)} ms, p99 ${p(0.99).toFixed(1)} ms, max ${p(1).toFixed(1)} ms; build still running at the end: ${building}`,
    );
    for (const answer of answers) assert.equal(answer.rows.length, 10);
    assert.ok(during >= 5, `gets answered while the exact searches ran: ${during}`);
    assert.ok(p(1) < STALL_MS, `slowest get ${p(1).toFixed(0)} ms`);
  } finally {
    await served.stop();
  }
});
