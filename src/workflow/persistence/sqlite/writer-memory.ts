/**
 * What the SQLite backend's main thread remembers of its database, so that the reads on a
 * run's hot path (a start's namespace and latest definition, a describe's transcribed
 * attempts) are answered without a crossing to the storage thread and back. Each crossing
 * costs both threads a wake-up and a message, and in the closed loop these reads were four
 * crossings per workflow beside its commits.
 *
 * It is sound because this process is the database's only writer: the connection holds
 * SQLite's EXCLUSIVE lock from open to close (database.ts), and every change to these tables
 * is a call made through this store, seen here when it is made. A change invalidates at
 * the moment it is made, before it crosses, and a read remembers its answer only if no
 * change was made between its own making and its answer (the epoch), so an answer from
 * memory is always the one the thread would give to a read made at the same point of the
 * call order. Calls cross in the order made, so a read made after a change sees it.
 *
 * - Namespaces by name and each name's latest definition: forgotten whole by any namespace
 *   creation or deletion or definition registration (rare acts: starts vastly outnumber them).
 * - Transcribed attempts: a run whose start was committed through this store and for which
 *   no transcript entry has been appended through it has none, so `attempts` is empty without
 *   a read. An append made before the run's start commit (a speculative dispatch, see
 *   engine/speculation.ts, runs at most a few commits ahead) is remembered in `transcribed`,
 *   which holds far more runs than can be in that window. A run remembered by neither is
 *   read, as before; so is every run after a restart.
 *
 * Every table is bounded (`MEMORY_ENTRIES`), its oldest entry leaving first. Records are
 * frozen: callers share them.
 */

import type { NamespaceRecord, NamespaceStore, TranscriptStore } from "../store.ts";
import type { DefinitionRecord, DefinitionStore } from "../workflows.ts";

/** The most entries each of the memory's tables holds. */
export const MEMORY_ENTRIES = 65_536;

/** A Map that forgets its oldest entry past `max` entries. */
class Bounded<K, V> {
  readonly #max: number;
  readonly map = new Map<K, V>();

  constructor(max: number) {
    this.#max = max;
  }

  set(key: K, value: V): void {
    if (this.map.size >= this.#max && !this.map.has(key)) {
      this.map.delete(this.map.keys().next().value as K);
    }
    this.map.set(key, value);
  }
}

export class WriterMemory {
  #epoch = 0;
  readonly #namespaces: Bounded<string, NamespaceRecord | undefined>;
  readonly #latest: Bounded<string, DefinitionRecord | undefined>;
  /** Runs started through this store with no transcript entry appended through it. */
  readonly #untranscribed: Bounded<string, true>;
  /** Runs a transcript entry was appended to through this store. */
  readonly #transcribed: Bounded<string, true>;

  constructor(max = MEMORY_ENTRIES) {
    this.#namespaces = new Bounded(max);
    this.#latest = new Bounded(max);
    this.#untranscribed = new Bounded(max);
    this.#transcribed = new Bounded(max);
  }

  /** The namespace store with its reads remembered and its changes forgetting them. */
  namespaces(store: NamespaceStore): NamespaceStore {
    return {
      create: (input) => this.#changing(() => store.create(input)),
      delete: (name) => this.#changing(() => store.delete(name)),
      get: (name) => this.#read(this.#namespaces, name, () => store.get(name)),
      list: () => store.list(),
      usage: (name) => store.usage(name),
    };
  }

  /** The definition store with `latest` remembered and registrations forgetting it. */
  definitions(store: DefinitionStore): DefinitionStore {
    return {
      register: (input) => this.#changing(() => store.register(input)),
      latest: (namespace, name) =>
        this.#read(this.#latest, `${namespace}\0${name}`, () => store.latest(namespace, name)),
      get: (namespace, version) => store.get(namespace, version),
      list: (namespace) => store.list(namespace),
      versions: (namespace, name) => store.versions(namespace, name),
    };
  }

  /** The transcript store answering `attempts` of a run known to have none from memory. */
  transcripts(store: TranscriptStore): TranscriptStore {
    return {
      append: (ref, entry, at) => {
        this.#untranscribed.map.delete(ref.run_id);
        this.#transcribed.set(ref.run_id, true);
        return store.append(ref, entry, at);
      },
      list: (ref) => store.list(ref),
      attempts: (runId) =>
        this.#untranscribed.map.has(runId) ? Promise.resolve([]) : store.attempts(runId),
    };
  }

  /** A commit starting `runId` is being made through this store. */
  started(runId: string): void {
    if (!this.#transcribed.map.has(runId)) this.#untranscribed.set(runId, true);
  }

  /** How many entries the memory holds (for its tests). */
  get size(): number {
    return (
      this.#namespaces.map.size +
      this.#latest.map.size +
      this.#untranscribed.map.size +
      this.#transcribed.map.size
    );
  }

  #changing<T>(change: () => Promise<T>): Promise<T> {
    this.#epoch++;
    this.#namespaces.map.clear();
    this.#latest.map.clear();
    return change();
  }

  #read<V extends object>(
    table: Bounded<string, V | undefined>,
    key: string,
    read: () => Promise<V | undefined>,
  ): Promise<V | undefined> {
    if (table.map.has(key)) return Promise.resolve(table.map.get(key));
    const epoch = this.#epoch;
    return read().then((value) => {
      const kept = value === undefined ? undefined : Object.freeze(value);
      if (epoch === this.#epoch) table.set(key, kept);
      return kept;
    });
  }
}
