/**
 * Where a server process's CPU went, by category, from the V8 CPU profile its main thread
 * wrote with `--cpu-prof` and from the kernel's CPU accounting of its threads.
 *
 * On the main thread each sample's node is placed by the first rule its script URL or
 * function name matches, and a node no rule places (a builtin such as `JSON.stringify`, a
 * Node internal such as a stream write) counts for the category of its caller, so the cost
 * of a library call lands on the code that made it. The sampled shares are scaled to the
 * main thread's CPU time as the kernel counted it. The other threads' profiles are not
 * used: a sample there cannot tell CPU from a wait in a system call (the SQLite thread
 * spends much of its time in the commit's fsync). Their CPU time is taken from
 * /proc/PID/task instead: the SQLite thread's (`WorkerThread`) counts as SQLite, V8's
 * helper threads (`V8Worker`: concurrent marking and sweeping, background compiles) as GC,
 * the rest (libuv's pool, the signal thread) as other. The profiler's own sampling threads
 * (`v8:ProfEvntProc`, one per profiled thread) are the measurement's cost, not the server's:
 * they are counted apart (`profiler`) and left out of the table. Without `--cpu-prof` the
 * server has no such thread and its "rest" threads use no CPU in the closed loop.
 *
 * On the main thread "(program)" is native work with no JavaScript on the stack, placed as
 * other: `perf record` of the main thread during the closed loop shows it is mostly the
 * sockets' native halves run by the event loop (the HTTP parser run on a socket's read
 * before any JavaScript, HTTP/2's writes of the worker stream from native immediates, reads,
 * a MessagePort's structured-clone receive).
 *
 * `bench:workflows-server -- --profile` prints the result as µs per step; docs/engine.md
 * keeps the table ("Where a step's CPU goes").
 */

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { statFields } from "./process-cpu.ts";

/** The categories, in the order the table lists them. */
export const CATEGORIES = [
  "HTTP start and describe",
  "gRPC framing and protobuf",
  "decision core",
  "history encoding",
  "SQLite statements and commit",
  "agent/metrics/tracing wrappers",
  "change-signal path",
  "GC",
  "other",
] as const;

export type Category = (typeof CATEGORIES)[number];

/** First match wins; tested against `url + " " + functionName`. */
const RULES: readonly [RegExp, Category][] = [
  [/^ \(garbage collector\)$/, "GC"],
  [/src\/workflow\/runs\/(changes|ends|pending)\.ts/, "change-signal path"],
  [
    /src\/workflow\/(metrics|agents)\/|prom-client|@opentelemetry/,
    "agent/metrics/tracing wrappers",
  ],
  [
    /src\/workflow\/engine\/history\.ts|src\/workflow\/persistence\/sql\/run-rows\.ts| (encodeBatch|rowsOf)$/,
    "history encoding",
  ],
  [
    /src\/workflow\/persistence\/|node:sqlite|internal\/worker|messageport/,
    "SQLite statements and commit",
  ],
  [
    /src\/protocol\/worker-stream\/|src\/workflow\/rpc\/|@grpc\/|protobufjs|@protobufjs|internal\/http2|src\/common\/frame-reader/,
    "gRPC framing and protobuf",
  ],
  [/src\/workflow\/(engine|matching)\//, "decision core"],
  [
    /src\/workflow\/(http|runs|auth)\/|src\/common\/decode\/|fastify|find-my-way|avvio|light-my-request|fast-json-stringify|secure-json-parse|_http_|internal\/http\b|jose/,
    "HTTP start and describe",
  ],
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** CPU seconds of a process's threads, by the kernel's accounting, grouped as above. */
export interface ThreadCpu {
  readonly main: number;
  readonly sqlite: number;
  /** Of `sqlite`, the time in the kernel (the WAL's writes and fsyncs). */
  readonly sqliteKernel: number;
  readonly v8: number;
  readonly rest: number;
  /** The CPU profiler's own threads (not the server's work). */
  readonly profiler: number;
}

export function threadCpu(pid: number): ThreadCpu {
  const out = { main: 0, sqlite: 0, sqliteKernel: 0, v8: 0, rest: 0, profiler: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let seconds: number;
    let kernel: number;
    let comm: string;
    try {
      const fields = statFields(`/proc/${pid}/task/${tid}/stat`);
      kernel = Number(fields[12]) / 100;
      seconds = Number(fields[11]) / 100 + kernel;
      comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
    } catch {
      continue; // the thread ended meanwhile
    }
    if (tid === String(pid)) out.main += seconds;
    else if (comm === "WorkerThread") {
      out.sqlite += seconds;
      out.sqliteKernel += kernel;
    } else if (comm === "V8Worker") out.v8 += seconds;
    else if (comm === "v8:ProfEvntProc") out.profiler += seconds;
    else out.rest += seconds;
  }
  return out;
}

/** Microseconds of CPU per category over the window, each split by where it was counted. */
export interface ProfileSummary {
  readonly main: Record<Category, number>;
  readonly threads: Record<Category, number>;
}

function ruleFor(node: ProfileNode): Category | undefined {
  const key = `${node.callFrame.url} ${node.callFrame.functionName}`;
  for (const [pattern, category] of RULES) if (pattern.test(key)) return category;
  return undefined;
}

function zeros(): Record<Category, number> {
  return Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
}

/** The main thread's non-idle samples in [`from`, `to`] (µs, monotonic clock), by category. */
function sampled(profile: CpuProfile, from: number, to: number): Record<Category, number> {
  const micros = zeros();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const category = new Map<number, Category | "idle">();
  const place = (node: ProfileNode, inherited: Category) => {
    const name = node.callFrame.functionName;
    const own: Category | "idle" =
      name === "(idle)" ? "idle" : name === "(program)" ? "other" : (ruleFor(node) ?? inherited);
    category.set(node.id, own);
    const next = own === "idle" ? inherited : own;
    for (const child of node.children ?? []) place(byId.get(child)!, next);
  };
  // The root is the first node; every other node hangs under it.
  place(profile.nodes[0]!, "other");
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!;
    // A sample stands for the time until the next one.
    const span = profile.timeDeltas[i + 1] ?? 0;
    if (at < from || at > to) continue;
    const c = category.get(profile.samples[i]!)!;
    if (c !== "idle") micros[c] += span;
  }
  return micros;
}

/**
 * The main thread's profile in `dir` (V8 and `process.hrtime` share the monotonic clock on
 * Linux, so [`from`, `to`] is the window in µs as the bench read it), scaled to `cpu.main`,
 * and the other threads' CPU from `cpu` (seconds over the same window).
 */
export function summarizeProfile(
  dir: string,
  from: number,
  to: number,
  cpu: ThreadCpu,
): ProfileSummary {
  // Files are CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main one.
  const file = readdirSync(dir).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (file === undefined) throw new Error(`no main-thread profile in ${dir}`);
  const main = sampled(JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile, from, to);
  const total = Object.values(main).reduce((a, b) => a + b, 0);
  const scale = total === 0 ? 0 : (cpu.main * 1e6) / total;
  for (const c of CATEGORIES) main[c] *= scale;
  const threads = zeros();
  threads["SQLite statements and commit"] = cpu.sqlite * 1e6;
  threads.GC = cpu.v8 * 1e6;
  threads.other = cpu.rest * 1e6;
  return { main, threads };
}
