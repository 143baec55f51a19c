/**
 * Change signals for live streams and MCP sessions: a key (`run:<run_id>`,
 * `attempt:<run>/<activity>/<attempt>`, `definitions:<namespace>`) is signalled once what
 * changed is durable, and whoever subscribed to it wakes and reads again, instead of polling
 * the store. The signals come from thin wrappers around the engine's store (after each group
 * commit, for every run that appended events), the transcript store (after each append) and
 * the definition store (after each registration), so the engine, the registry and the hub
 * know nothing of HTTP, streams or MCP. A subscription remembers a signal that came while its
 * reader was busy, so a change between a read and the next wait is never missed; `wait` also
 * returns when its timeout (the caller's backstop) passes or its abort signal fires.
 */

import type { AttemptRef } from "../../protocol/attempt.ts";
import { attemptKey } from "../../protocol/attempt.ts";
import type { EngineStore } from "../engine/store.ts";
import type { TranscriptStore } from "../persistence/store.ts";
import type { DefinitionStore } from "../persistence/workflows.ts";

export const runKey = (runId: string) => `run:${runId}`;
export const attemptChangeKey = (ref: AttemptRef) => `attempt:${attemptKey(ref)}`;
/** A definition was registered in the namespace (MCP sessions' tools/list_changed). */
export const definitionsKey = (namespace: string) => `definitions:${namespace}`;

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
    return {
      wait: (timeoutMs, abort) => waitFor(listener, timeoutMs, abort),
      close: this.#add(key, listener),
    };
  }

  /**
   * Calls `onSignal` at each signal of `key` until the returned function is called: for a
   * listener that reacts to a change at once instead of reading in a loop. `onSignal` runs
   * on the commit path, so it only schedules its work.
   */
  listen(key: string, onSignal: () => void): () => void {
    // `wake` stays set: no wait ever clears it.
    return this.#add(key, { signalled: false, wake: onSignal });
  }

  #add(key: string, listener: Listener): () => void {
    const set = this.#listeners.get(key) ?? new Set<Listener>();
    this.#listeners.set(key, set);
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(key) === set) this.#listeners.delete(key);
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

/** The definition store, signalling the namespace once a registration is durable. */
export function signallingDefinitions(
  store: DefinitionStore,
  signals: ChangeSignals,
): DefinitionStore {
  return {
    // Every registration, new or not: either way the version becomes its name's latest.
    register: async (input) => {
      const registered = await store.register(input);
      signals.signal(definitionsKey(input.namespace));
      return registered;
    },
    get: (namespace, version) => store.get(namespace, version),
    latest: (namespace, name) => store.latest(namespace, name),
    list: (namespace) => store.list(namespace),
    versions: (namespace, name) => store.versions(namespace, name),
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
    attempts: (runId) => store.attempts(runId),
  };
}
