/**
 * A preload that samples a process's allocations from its start to its exit, for
 * `--import` (through SKEIN_BENCH_SERVER_NODE_OPTIONS in `bench:workflows-server`). It uses
 * V8's sampling heap profiler; SKEIN_HEAP_SAMPLES names the file the profile is written to
 * at exit (`bench/support/heap-summary.ts` reads it). With SKEIN_HEAP_SURVIVORS=1 only
 * allocations that outlived a scavenge are kept (the ones promoted to the old generation,
 * which the concurrent marker then walks), else every allocation (what makes scavenges
 * come often). Sampling costs CPU: figures taken with it are not the bench's figures.
 */

import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const target = process.env.SKEIN_HEAP_SAMPLES;
if (target !== undefined) {
  const session = new Session();
  session.connect();
  session.post("HeapProfiler.enable");
  session.post("HeapProfiler.startSampling", {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.SKEIN_HEAP_SURVIVORS !== "1",
  });
  // The inspector answers a session of its own thread synchronously, so this runs in `exit`.
  process.on("exit", () => {
    session.post("HeapProfiler.getSamplingProfile", (error, result) => {
      writeFileSync(target, JSON.stringify(error ?? result.profile));
    });
  });
}
