/**
 * In-memory timers for the engine: retry dispatch times, start-to-close and heartbeat
 * timeouts, sleep and deadline timers. A binary heap ordered by due time with one
 * `setTimeout` armed for the earliest entry, so thousands of pending timers cost one OS
 * timer and no polling. Setting a key again replaces its entry (the old heap node is skipped
 * when it surfaces). Keys live in numbered spaces (0 unless given): the engine keeps an
 * attempt's start-to-close, heartbeat and worker-lost timers under the attempt's own key in
 * a space each, so setting and deleting them builds no `stc:…` string to hash each time. The durable record of a timer is in the run's history; this queue is
 * rebuilt from history after a restart.
 */

import { YoungMap } from "./young-map.ts";

/**
 * One timer, both the heap's node and its key's entry: a node is live while its key's entry
 * is this very node, so replacing or deleting a key leaves its old node stale in the heap,
 * skipped when it surfaces (one object per timer set, no sequence numbers to compare).
 */
interface Node<T> {
  readonly at: number;
  readonly space: number;
  readonly key: string;
  readonly payload: T;
}

/** setTimeout's largest delay; longer waits re-arm when it elapses. */
const MAX_DELAY = 2_147_483_647;

export class TimerQueue<T> {
  readonly #heap: Node<T>[] = [];
  /** Live nodes by space, then key. */
  readonly #spaces: YoungMap<string, Node<T>>[] = [new YoungMap()];
  #size = 0;
  readonly #fire: (key: string, payload: T) => void;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #armedFor = Number.POSITIVE_INFINITY;
  #closed = false;

  constructor(fire: (key: string, payload: T) => void, now: () => number = Date.now) {
    this.#fire = fire;
    this.#now = now;
  }

  get size(): number {
    return this.#size;
  }

  #space(space: number): YoungMap<string, Node<T>> {
    let entries = this.#spaces[space];
    while (entries === undefined) {
      this.#spaces.push(new YoungMap());
      entries = this.#spaces[space];
    }
    return entries;
  }

  has(key: string, space = 0): boolean {
    return this.#spaces[space]?.has(key) === true;
  }

  /** Fires `payload` under `key` (in `space`) at time `at` (ms since the epoch), replacing any entry. */
  set(key: string, at: number, payload: T, space = 0): void {
    const entries = this.#space(space);
    const size = entries.size;
    const node: Node<T> = { at, space, key, payload };
    entries.set(key, node);
    this.#size += entries.size - size;
    this.#push(node);
    // Deleted and replaced entries leave stale nodes behind; rebuild before they dominate.
    if (this.#heap.length > 4 * this.#size + 1024) this.#compact();
    if (at < this.#armedFor) this.#arm();
  }

  delete(key: string, space = 0): void {
    if (this.#spaces[space]?.delete(key) === true) this.#size--;
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    for (const entries of this.#spaces) entries.clear();
    this.#size = 0;
    this.#heap.length = 0;
  }

  #compact(): void {
    this.#heap.length = 0;
    for (const entries of this.#spaces) {
      for (const node of entries.values()) this.#push(node);
    }
    this.#arm();
  }

  #arm(): void {
    if (this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Number.POSITIVE_INFINITY;
    const top = this.#peekLive();
    if (top === undefined) return;
    this.#armedFor = top.at;
    const delay = Math.min(MAX_DELAY, Math.max(0, top.at - this.#now()));
    this.#timer = setTimeout(() => this.#run(), delay);
  }

  #run(): void {
    this.#timer = undefined;
    this.#armedFor = Number.POSITIVE_INFINITY;
    const now = this.#now();
    for (let top = this.#peekLive(); top !== undefined && top.at <= now; top = this.#peekLive()) {
      this.#pop();
      this.#spaces[top.space]!.delete(top.key);
      this.#size--;
      this.#fire(top.key, top.payload);
      if (this.#closed) return;
    }
    this.#arm();
  }

  /** The earliest node whose entry is still current, dropping stale ones. */
  #peekLive(): Node<T> | undefined {
    while (this.#heap.length > 0) {
      const top = this.#heap[0]!;
      if (this.#spaces[top.space]!.get(top.key) === top) return top;
      this.#pop();
    }
    return undefined;
  }

  #push(node: Node<T>): void {
    const heap = this.#heap;
    heap.push(node);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= node.at) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = node;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) break;
      const r = l + 1;
      const c = r < heap.length && heap[r]!.at < heap[l]!.at ? r : l;
      if (heap[c]!.at >= last.at) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = last;
  }
}
