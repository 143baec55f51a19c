/**
 * The floor this machine puts under a durable step at one in flight, apart from Skein: how
 * long an fsync of a small write takes in the directory the benches use, and how long
 * waking a thread that sleeps costs the thread that wakes it (a `postMessage` of one number
 * to a worker thread waiting in its event loop, then a reply). A step at C = 1 needs at least
 * one synced commit, and four wake-ups: the server wakes the worker with the task, the
 * worker wakes the server with the result, the server wakes its storage thread with the
 * commit, and the storage thread wakes the server with its answer.
 *
 *   node bench/support/machine-floor.ts [DIR]   (DIR: os.tmpdir() when absent)
 */

import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";

const ROUNDS = 500;

function percentiles(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return `p50 ${at(50).toFixed(0)} µs, p90 ${at(90).toFixed(0)} µs, min ${sorted[0]!.toFixed(0)} µs`;
}

function fsyncTimes(dir: string): number[] {
  const scratch = mkdtempSync(join(dir, "skein-floor-"));
  const fd = openSync(join(scratch, "wal"), "w");
  const page = Buffer.alloc(8192, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      writeSync(fd, page, 0, page.length, (i % 64) * page.length);
      const started = process.hrtime.bigint();
      fsyncSync(fd);
      times.push(Number(process.hrtime.bigint() - started) / 1000);
    }
  } finally {
    closeSync(fd);
    rmSync(scratch, { recursive: true, force: true });
  }
  return times;
}

async function wakeTimes(): Promise<number[]> {
  const worker = new Worker(
    "require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));",
    { eval: true },
  );
  await new Promise((resolve) => worker.once("online", resolve));
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    // Long enough for the worker to be back asleep in its event loop.
    await new Promise((resolve) => setTimeout(resolve, 1));
    const reply = new Promise((resolve) => worker.once("message", resolve));
    const started = process.hrtime.bigint();
    worker.postMessage(i);
    times.push(Number(process.hrtime.bigint() - started) / 1000);
    await reply;
  }
  await worker.terminate();
  return times;
}

const dir = process.argv[2] ?? tmpdir();
const load = loadavg().map((l) => l.toFixed(2));
process.stdout.write(
  `fsync of an 8 KiB write in ${dir}: ${percentiles(fsyncTimes(dir))}\n` +
    `waking a sleeping thread (the waker's time in postMessage): ${percentiles(await wakeTimes())}\n` +
    `load ${load.join(" ")}\n`,
);
