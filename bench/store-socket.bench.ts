/**
 * `npm run bench:store-socket`: what one client's large frame costs the others. A small
 * client reads one record in a loop (p50/p99 of its gets) while another client trickles a
 * 16 MiB frame in 64 KiB chunks (one chunk per turn of the event loop), against the same
 * loop with no trickle. The server reassembles frames incrementally (frames.ts), so the
 * trickle should add little; re-joining the buffered bytes on every chunk made it copy
 * about 2 GiB per such frame and delayed the small client by up to 0.9 s. Server and
 * clients share one process here, as in bench:store. Nothing is asserted.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreClient } from "../src/store/client/client.ts";
import { createStore, ENGINE_DEFAULTS, openStore } from "../src/store/engine/index.ts";
import { encodeFrame } from "../src/store/transport/frames.ts";
import { startStoreServer } from "../src/store/transport/server.ts";
import { type BenchCase, knob, percentile, runBench } from "./harness.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/store/transport"];

const FRAME_BYTES = knob("BENCH_FRAME_BYTES", 16 << 20, 1 << 20);
const CHUNK_BYTES = 64 << 10;
/** Gets sampled in the case without a trickle. */
const QUIET_GETS = knob("BENCH_GETS", 2000, 100);

const root = mkdtempSync(join(tmpdir(), "skein-bench-socket-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

const dir = join(root, "data");
await createStore(dir, { shards: 4, cacheBytesTotal: 64 << 20, executorThreads: 1 });
const store = openStore({
  dataDir: dir,
  branchCacheBytesPerShard: 8 << 20,
  maxPage: 1000,
  ...ENGINE_DEFAULTS,
});
const socketPath = join(root, "s.sock");
const server = await startStoreServer(store, {
  socketPath,
  maxFrame: 2 * FRAME_BYTES,
  maxClients: 4,
  timeoutMs: 60_000,
});
const reader = await StoreClient.connect(socketPath, { client: "reader" });
await reader.call("collections.create", { collection: "bench" });
await reader.put("bench", [{ key: "k", value: { title: "a small record", n: 1 } }]);

/** Gets one record until `until` settles (or `count` gets); returns latencies in ms. */
async function sampleGets(until: Promise<unknown> | undefined, count = Infinity) {
  const samples: number[] = [];
  let done = false;
  void until?.then(() => {
    done = true;
  });
  while (!done && samples.length < count) {
    const start = performance.now();
    await reader.get("bench", "k");
    samples.push(performance.now() - start);
  }
  return samples;
}

/**
 * A raw client that has said hello; `send` writes one FRAME_BYTES frame a chunk per turn
 * and resolves once its last chunk is written. The frame is encoded before the sampling
 * starts (its encoding would otherwise pause this shared process).
 */
async function trickler(): Promise<{ send(): Promise<void> }> {
  const socket: Socket = createConnection(socketPath);
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.on("error", () => {});
  socket.on("data", () => {});
  socket.write(encodeFrame({ id: 1, verb: "hello", args: { max_frame: 2 * FRAME_BYTES } }));
  // An unknown field, refused once the whole frame is decoded. Binary, because decoding a
  // 16 MiB string takes msgpackr 60-80 ms here: a cost of any such frame once complete,
  // not of its trickle, which is what this measures.
  const frame = encodeFrame({
    id: 2,
    verb: "document.get",
    args: { collection: "bench", key: "k", pad: Buffer.alloc(FRAME_BYTES - 100, 1) },
  });
  return {
    async send() {
      for (let at = 0; at < frame.length; at += CHUNK_BYTES) {
        if (!socket.write(frame.subarray(at, at + CHUNK_BYTES))) {
          await new Promise((resolve) => socket.once("drain", resolve));
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

const figures = (samples: number[]) => ({
  gets: samples.length,
  p50_ms: percentile(samples, 50),
  p99_ms: percentile(samples, 99),
  max_ms: Math.max(...samples),
});

const cases: BenchCase[] = [
  {
    name: "small client's gets, no other traffic",
    run: async () => figures(await sampleGets(undefined, QUIET_GETS)),
  },
  {
    name: "small client's gets while a 16 MiB frame trickles in 64 KiB chunks",
    run: async () => {
      const { send } = await trickler();
      return figures(await sampleGets(send()));
    },
  },
];

await runBench("store-socket", { measures: MEASURES }, cases);
await reader.close();
await server.close();
await store.close();
