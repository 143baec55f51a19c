/**
 * The index thread: the store's vector search work that would otherwise hold its event
 * loop. It keeps, per branch head, the vector table of one companion version (table.ts)
 * and that head's HNSW index (hnsw.ts), and serves exact searches, HNSW searches, builds,
 * diffs, checkpoints and loads. The event loop only reads the store, hands work over and
 * swaps in what comes back.
 *
 * Messages are taken in arrival order, and a diff or an HNSW search is done as it arrives,
 * so a search sees every diff the loop sent before it. Exact searches are answered from
 * the table they found on arrival (tables are immutable), gathered: the questions waiting
 * for one table are scanned in one pass. A build is done in chunks of `BUILD_CHUNK`
 * records between which waiting searches are answered, so a build delays a search by one
 * chunk at most; its snapshot table is immutable, so diffs arriving meanwhile move only
 * the head's table, and the loop catches the new index up once it is swapped in.
 */

import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import type { VectorHit } from "./exact.ts";
import { HnswIndex } from "./hnsw.ts";
import {
  type IndexAnswer,
  type IndexRequest,
  type IndexState,
  MISS,
  type ThreadData,
} from "./index-protocol.ts";
import { SCAN_QUESTIONS } from "./scan-kernel.ts";
import {
  advance,
  exactTable,
  prefixRange,
  unpackTable,
  type VectorTable,
  windowsOf,
} from "./table.ts";

/**
 * The thread's nice value above the process's (Linux only): the store's event loop is
 * preferred whenever both want a core, so a request is answered while a build or a scan
 * holds the thread (and usearch's insert threads, which inherit it). On Linux a nice value
 * is a thread's; elsewhere it would be the whole process's, so it is left alone.
 */
const NICE = 5;

/** Records added to a building index between two looks at the queue. */
const BUILD_CHUNK = 128;
/** Most questions scanned together in one pass over a table: the kernel's batch. */
const EXACT_BATCH = SCAN_QUESTIONS;

interface Build {
  readonly id: number;
  readonly table: VectorTable;
  readonly index: HnswIndex;
  next: number;
}

interface Slot {
  table: VectorTable | undefined;
  index: HnswIndex | undefined;
  build: Build | undefined;
}

interface Exact {
  readonly id: number;
  readonly table: VectorTable;
  readonly question: Float32Array;
  readonly k: number;
  readonly prefix: string | undefined;
}

const port = parentPort!;
if (process.platform === "linux") {
  try {
    setPriority(Math.min(19, getPriority() + NICE));
  } catch {
    // A process not allowed to renice (a seccomp filter, say) runs the thread as it is.
  }
}
const { insertThreads } = workerData as ThreadData;
const slots = new Map<string, Slot>();
const exacts: Exact[] = [];
let pumping = false;

function slot(head: string): Slot {
  let s = slots.get(head);
  if (s === undefined) {
    s = { table: undefined, index: undefined, build: undefined };
    slots.set(head, s);
  }
  return s;
}

function state(index: HnswIndex): IndexState {
  const { version, records, dead, wasteful } = index;
  return { version, records, dead, wasteful };
}

function answer(id: number, value: unknown): void {
  port.postMessage({ id, ok: true, value } satisfies IndexAnswer);
}

function fail(id: number, error: unknown): void {
  port.postMessage({ id, ok: false, message: (error as Error).message } satisfies IndexAnswer);
}

/** What `handle` returns for a request answered later (a queued exact search, a build). */
const LATER = Symbol("later");

port.on("message", (request: IndexRequest) => {
  try {
    const value = handle(request);
    if (value !== LATER) answer(request.id, value);
  } catch (error) {
    fail(request.id, error);
  }
});

/** The answer to a request, or LATER. */
function handle(request: IndexRequest): unknown {
  switch (request.type) {
    case "table": {
      // Tables read concurrently may arrive out of order: the newest stays.
      const s = slot(request.head);
      if (s.table === undefined || s.table.version < request.table.version) {
        s.table = unpackTable(request.table);
      }
      return s.table.version;
    }
    case "advance": {
      const s = slot(request.head);
      const set = unpackTable(request.set);
      const removed = new Set(request.removed);
      if (s.table?.version === request.from) {
        const changed = new Map(set.keys.map((key, i) => [key, windowsOf(set, i)] as const));
        s.table = advance(s.table, request.to, removed, changed);
      }
      const index = s.index;
      if (index?.version === request.from) {
        for (const key of removed) index.remove(key);
        index.set(set.keys.map((key, i) => ({ key, windows: windowsOf(set, i) })));
        index.version = request.to;
      }
      return index === undefined ? null : state(index);
    }
    case "exact": {
      const table =
        request.table === undefined
          ? slots.get(request.head ?? "")?.table
          : unpackTable(request.table);
      if (table?.version !== request.version) return MISS;
      const { id, question, k, prefix } = request;
      exacts.push({ id, table, question, k, prefix });
      pump();
      return LATER;
    }
    case "search": {
      const index = slots.get(request.head)?.index;
      if (index?.version !== request.version) return MISS;
      return index.search(request.question, request.k);
    }
    case "build": {
      const s = slot(request.head);
      const table = s.table;
      if (table?.version !== request.version || table.dims === 0) return MISS;
      const index = new HnswIndex(table.dims, table.version, insertThreads);
      s.build = { id: request.id, table, index, next: 0 };
      pump();
      return LATER;
    }
    case "save": {
      const index = slots.get(request.head)?.index;
      if (index === undefined) return null;
      const checkpoint = index.save(request.dir, request.head, request.where);
      return { checkpoint, state: state(index) };
    }
    case "load": {
      const index = HnswIndex.load(request.dir, request.checkpoint);
      slot(request.head).index = index;
      return state(index);
    }
    case "drop": {
      const s = slots.get(request.head);
      if (s?.build !== undefined) answer(s.build.id, MISS);
      if (request.what === "all") slots.delete(request.head);
      else if (s !== undefined) {
        s.index = undefined;
        s.build = undefined;
      }
      return null;
    }
  }
}

/** Schedules the work loop: waiting exact searches first, then one chunk of each build. */
function pump(): void {
  if (pumping) return;
  pumping = true;
  setImmediate(work);
}

function work(): void {
  pumping = false;
  answerExacts();
  for (const s of slots.values()) if (s.build !== undefined) buildChunk(s, s.build);
  if (exacts.length > 0 || [...slots.values()].some((s) => s.build !== undefined)) pump();
}

function answerExacts(): void {
  while (exacts.length > 0) {
    const first = exacts[0]!;
    const group: Exact[] = [];
    for (let i = 0; i < exacts.length && group.length < EXACT_BATCH; i++) {
      const e = exacts[i]!;
      if (e.table === first.table && e.k === first.k && e.prefix === first.prefix) {
        group.push(e);
        exacts.splice(i--, 1);
      }
    }
    let hits: VectorHit[][];
    try {
      const range = prefixRange(first.table, first.prefix);
      hits = exactTable(
        first.table,
        group.map((e) => e.question),
        first.k,
        range,
      );
    } catch (error) {
      for (const e of group) fail(e.id, error);
      continue;
    }
    group.forEach((e, i) => {
      answer(e.id, hits[i]);
    });
  }
}

function buildChunk(s: Slot, build: Build): void {
  const { table, index } = build;
  const end = Math.min(build.next + BUILD_CHUNK, table.keys.length);
  const records = [];
  for (let i = build.next; i < end; i++) {
    records.push({ key: table.keys[i]!, windows: windowsOf(table, i) });
  }
  try {
    index.set(records);
  } catch (error) {
    s.build = undefined;
    fail(build.id, error);
    return;
  }
  build.next = end;
  if (end < table.keys.length) return;
  s.build = undefined;
  s.index = index;
  answer(build.id, state(index));
}
