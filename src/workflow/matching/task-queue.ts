/**
 * Task queues: each (namespace, task queue) has the live sessions serving it, in the order
 * they connected, and a backlog per action of the attempts waiting for a free slot. A new
 * attempt goes to the next session, round robin from the one after the last chosen, that
 * has a free slot for its action. Queues are keyed by both names in nested maps (never a
 * joined string) and forgotten once nothing uses them, so worker-chosen names do not
 * accumulate.
 */

import { Deque } from "../../common/deque.ts";
import type { TaskOffer } from "../engine/dispatcher.ts";
import { hasSlotFor, type Session } from "./session.ts";

/** One (namespace, task queue). */
export interface TaskQueue {
  readonly namespace: string;
  readonly name: string;
  readonly sessions: Session[];
  /** Where the next round-robin search starts. */
  next: number;
  readonly backlog: Map<string, Deque<TaskOffer>>;
  waiting: number;
}

export class TaskQueues {
  /** Namespace → task queue → queue. */
  readonly #queues = new Map<string, Map<string, TaskQueue>>();

  /** The queue, created when absent. */
  get(namespace: string, name: string): TaskQueue {
    let queues = this.#queues.get(namespace);
    if (queues === undefined) {
      queues = new Map();
      this.#queues.set(namespace, queues);
    }
    let queue = queues.get(name);
    if (queue === undefined) {
      queue = { namespace, name, sessions: [], next: 0, backlog: new Map(), waiting: 0 };
      queues.set(name, queue);
    }
    return queue;
  }

  /** The queue when it exists. */
  find(namespace: string, name: string): TaskQueue | undefined {
    return this.#queues.get(namespace)?.get(name);
  }

  /** Forgets a queue nothing uses any more. */
  prune(queue: TaskQueue): void {
    if (queue.sessions.length > 0 || queue.waiting > 0) return;
    const queues = this.#queues.get(queue.namespace);
    if (queues?.get(queue.name) !== queue) return;
    queues.delete(queue.name);
    if (queues.size === 0) this.#queues.delete(queue.namespace);
  }

  /** Attempts waiting in every queue. */
  waiting(): number {
    let waiting = 0;
    for (const queues of this.#queues.values()) {
      for (const q of queues.values()) waiting += q.waiting;
    }
    return waiting;
  }
}

/** Puts an offer at the back of its action's backlog. */
export function enqueue(queue: TaskQueue, task: TaskOffer): void {
  let backlog = queue.backlog.get(task.action);
  if (backlog === undefined) {
    backlog = new Deque();
    queue.backlog.set(task.action, backlog);
  }
  backlog.push(task);
  queue.waiting++;
}

/** Takes a waiting offer out of its queue's backlog; false when it is not there. */
export function withdraw(queue: TaskQueue, offer: TaskOffer): boolean {
  const backlog = queue.backlog.get(offer.action);
  if (backlog?.remove((t) => t === offer) === undefined) return false;
  queue.waiting--;
  if (backlog.size === 0) queue.backlog.delete(offer.action);
  return true;
}

/** The next session, round robin, with a free slot for `action`. */
export function pickSession(queue: TaskQueue, action: string): Session | undefined {
  const n = queue.sessions.length;
  for (let i = 0; i < n; i++) {
    const s = queue.sessions[(queue.next + i) % n]!;
    if (hasSlotFor(s, action)) {
      queue.next = (queue.next + i + 1) % n;
      return s;
    }
  }
  return undefined;
}
