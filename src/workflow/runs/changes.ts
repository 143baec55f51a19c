/**
 * Change signals for live streams: a key (`run:<run_id>`, `attempt:<run>/<activity>/<attempt>`)
 * is signalled once what changed is durable, and a stream subscribed to it wakes and reads
 * again, instead of polling the store. The signals come from thin wrappers around the
 * engine's store (after each group commit, for every run that appended events) and the
 * transcript store (after each append), so the engine and the hub know nothing of HTTP or
 * streams. A subscription remembers a signal that came while its reader was busy, so a
 * change between a read and the next wait is never missed; `wait` also returns when its
 * timeout (the caller's backstop) passes or its abort signal fires.
 */

import type { AttemptRef } from "../../protocol/attempt.ts";
import { attemptKey } from "../../protocol/attempt.ts";
import type { EngineStore } from "../engine/store.ts";
import type { TranscriptStore } from "../persistence/store.ts";

export const runKey = (runId: string) => `run:${runId}`;
export const attemptChangeKey = (ref: AttemptRef) => `attempt:${attemptKey(ref)}`;

export interface Subscription {
  /**
   * Resolves at the next signal (at once if one came since the last wait), the timeout or
   * the abort; true when a signal came.
   */
  wait(timeoutMs: number, abort: AbortSignal): Promise<boolean>;
  close(): void;
}

interface Listener {
  signalled: boolean;
  wake: (() => void) | undefined;
}

export class ChangeSignals {
  readonly #listeners = new Map<string, Set<Listener>>();

  signal(key: string): void {
    for (const listener of this.#listeners.get(key) ?? []) {
      listener.signalled = true;
      listener.wake?.();
    }
  }

  subscribe(key: string): Subscription {
    const listener: Listener = { signalled: false, wake: undefined };
    const set = this.#listeners.get(key) ?? new Set<Listener>();
    this.#listeners.set(key, set);
    set.add(listener);
    return {
      wait: (timeoutMs, abort) => waitFor(listener, timeoutMs, abort),
      close: () => {
        set.delete(listener);
        if (set.size === 0 && this.#listeners.get(key) === set) this.#listeners.delete(key);
      },
    };
  }

  /** Keys with a subscriber (the commit path skips signalling when none). */
  get watched(): number {
    return this.#listeners.size;
  }
}

function waitFor(listener: Listener, timeoutMs: number, abort: AbortSignal): Promise<boolean> {
  if (listener.signalled || abort.aborted) {
    const signalled = listener.signalled;
    listener.signalled = false;
    return Promise.resolve(signalled);
  }
  return new Promise((done) => {
    const finish = () => {
      clearTimeout(timer);
      abort.removeEventListener("abort", finish);
      listener.wake = undefined;
      const signalled = listener.signalled;
      listener.signalled = false;
      done(signalled);
    };
    const timer = setTimeout(finish, timeoutMs);
    abort.addEventListener("abort", finish);
    listener.wake = finish;
  });
}

/** The engine's store, signalling every run whose events a commit made durable. */
export function signallingEngineStore(store: EngineStore, signals: ChangeSignals): EngineStore {
  return {
    commit: async (batch) => {
      await store.commit(batch);
      // The commit path is hot and streams are rare: with none open, no key is built.
      if (signals.watched === 0) return;
      for (const append of batch)
        if (append.events.length > 0) signals.signal(runKey(append.runId));
    },
    loadRunning: () => store.loadRunning(),
    loadOutbox: () => store.loadOutbox(),
  };
}

/** The transcript store, signalling an attempt once an entry of it is stored. */
export function signallingTranscripts(
  store: TranscriptStore,
  signals: ChangeSignals,
): TranscriptStore {
  return {
    append: async (ref, entry, at) => {
      await store.append(ref, entry, at);
      signals.signal(attemptChangeKey(ref));
    },
    list: (ref) => store.list(ref),
  };
}
