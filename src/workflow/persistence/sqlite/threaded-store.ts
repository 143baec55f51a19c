/**
 * The SQLite backend as the server runs it: the connection lives on its own thread
 * (`thread.ts`) and this class is the `WorkflowStore` the rest of the server holds. Every
 * method posts one call and resolves with the thread's answer, so a synced commit (a WAL
 * fsync, a tenth of a millisecond or more) no longer holds the event loop: while it runs,
 * the server keeps reading worker results, deciding and dispatching, and the next engine
 * commit gathers what arrived meanwhile. Calls are served in the order they were made, so
 * commits land in order and a read sees every commit made before it.
 *
 * Thread states: opening → ready → closing → closed; a thread that dies unexpectedly fails
 * every pending and later call with `storage_unavailable`, and the engine stops (history is
 * the truth: a restart recovers).
 */

import { Worker } from "node:worker_threads";
import type { SkeinError } from "../../../common/errors.ts";
import { isWorkflowErrorCode, workflowError } from "../../errors.ts";
import { encodeBatch } from "../sql/run-commit.ts";
import type {
  BackupResult,
  DeploymentStore,
  NamespaceStore,
  TranscriptStore,
  WorkflowStore,
} from "../store.ts";
import type { DefinitionStore, RunStore, WorkflowPersistence } from "../workflows.ts";
import { type CommitMessage, packCommit } from "./commit-message.ts";
import type { Answer, Area, Request, ThreadData, ThreadError } from "./thread-protocol.ts";
import { WriterMemory } from "./writer-memory.ts";

interface Waiter {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** The methods of each area that cross to the thread; `satisfies` keeps each list whole. */
const METHODS = {
  namespaces: {
    create: true,
    get: true,
    list: true,
    usage: true,
    delete: true,
  } satisfies Record<keyof NamespaceStore, true>,
  deployments: { get: true, list: true, put: true, delete: true } satisfies Record<
    keyof DeploymentStore,
    true
  >,
  transcripts: { append: true, list: true, attempts: true } satisfies Record<
    keyof TranscriptStore,
    true
  >,
  definitions: {
    register: true,
    get: true,
    latest: true,
    list: true,
    versions: true,
  } satisfies Record<keyof DefinitionStore, true>,
  runs: {
    commit: true,
    loadRunning: true,
    loadOutbox: true,
    byWorkflowId: true,
    list: true,
    history: true,
  } satisfies Record<keyof RunStore, true>,
} as const;

function rebuild(error: ThreadError): Error {
  if (error.code !== undefined && isWorkflowErrorCode(error.code)) {
    return workflowError(error.code, error.message);
  }
  return Object.assign(new Error(error.message), { code: error.code });
}

export class ThreadedSqliteStore implements WorkflowStore {
  readonly backend = "sqlite";
  readonly schemaVersion: number;
  readonly file: string;
  readonly namespaces: NamespaceStore;
  readonly deployments: DeploymentStore;
  readonly transcripts: TranscriptStore;
  readonly workflows: WorkflowPersistence;
  /** What the main thread remembers of the database (exposed for its tests). */
  readonly memory: WriterMemory;
  readonly #thread: Worker;
  readonly #waiters = new Map<number, Waiter>();
  #nextId = 1;
  /** Calls made in this turn of the loop, not yet posted. */
  #requests: Request[] = [];
  #broken: SkeinError | undefined;
  #closed: Promise<void> | undefined;

  private constructor(thread: Worker, file: string, schemaVersion: number) {
    this.#thread = thread;
    this.file = file;
    this.schemaVersion = schemaVersion;
    // The hot path's small reads are answered from memory where it knows them (writer-memory.ts).
    const memory = new WriterMemory();
    this.memory = memory;
    this.namespaces = memory.namespaces(this.#remote("namespaces"));
    this.deployments = this.#remote("deployments");
    this.transcripts = memory.transcripts(this.#remote("transcripts"));
    const runs: RunStore = this.#remote("runs");
    // The batch is encoded here and packed into one array of strings and numbers
    // (commit-message.ts); the thread writes it with `SqlRunStore.commitEncoded`.
    runs.commit = async (batch) => {
      const encoded = encodeBatch(batch);
      if (encoded === null) return;
      for (let i = 0; i < encoded.length; i++) {
        if (encoded[i]!.starts) memory.started(encoded[i]!.runId);
      }
      await this.#commit(packCommit(encoded));
    };
    this.workflows = { definitions: memory.definitions(this.#remote("definitions")), runs };
    thread.on("message", (answers: Answer[]) => {
      for (const answer of answers) this.#answered(answer);
    });
    thread.on("error", (error) => this.#fail(`the storage thread failed: ${error.message}`));
    thread.on("exit", () => this.#fail("the storage thread exited"));
  }

  /** Starts the thread, which opens and migrates the database at `file`. */
  static open(file: string): Promise<ThreadedSqliteStore> {
    const thread = new Worker(new URL("./thread.ts", import.meta.url), {
      workerData: { file } satisfies ThreadData,
    });
    return new Promise((resolve, reject) => {
      const onExit = () =>
        reject(workflowError("storage_unavailable", `the storage thread for ${file} exited`));
      thread.once("exit", onExit);
      thread.once("error", reject);
      thread.once("message", (answer: Answer) => {
        thread.off("exit", onExit);
        thread.off("error", reject);
        if (answer.type === "ready") {
          resolve(new ThreadedSqliteStore(thread, file, answer.schemaVersion));
        } else {
          reject(answer.type === "failed" ? rebuild(answer.error) : new Error("bad first answer"));
          void thread.terminate();
        }
      });
    });
  }

  /** An online copy of the database at `target`, made on the storage thread (backup.ts). */
  async backup(target: string): Promise<BackupResult> {
    if (this.#closed !== undefined) {
      throw workflowError("storage_unavailable", "the store is closed");
    }
    return (await this.#send({ type: "backup", id: this.#nextId++, target })) as BackupResult;
  }

  /** Waits for every call made before it, then closes the database and ends the thread. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      if (this.#broken === undefined) {
        await this.#send({ type: "close", id: this.#nextId++ }).catch(() => {});
      }
      await this.#thread.terminate();
    })();
    return this.#closed;
  }

  #remote<A extends Area>(area: A): never {
    const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
    for (const method of Object.keys(METHODS[area])) {
      out[method] = (...args) => this.#call(area, method, args);
    }
    return out as never;
  }

  #call(area: Area, method: string, args: unknown[]): Promise<unknown> {
    return (
      this.#refusedOnceClosed() ??
      this.#send({ type: "call", id: this.#nextId++, area, method, args })
    );
  }

  #commit(batch: CommitMessage): Promise<unknown> {
    return this.#refusedOnceClosed() ?? this.#send({ type: "commit", id: this.#nextId++, batch });
  }

  /** A closed store refuses calls (a broken one's `#send` refuses them with the cause). */
  #refusedOnceClosed(): Promise<never> | undefined {
    if (this.#closed === undefined || this.#broken !== undefined) return undefined;
    return Promise.reject(workflowError("storage_unavailable", "the store is closed"));
  }

  #send(request: Request): Promise<unknown> {
    if (this.#broken !== undefined) return Promise.reject(this.#broken);
    return new Promise((resolve, reject) => {
      this.#waiters.set(request.id, { resolve, reject });
      if (this.#requests.push(request) === 1) setImmediate(this.#post);
    });
  }

  /** Posts the calls made during this turn of the loop as one message, in the order made. */
  readonly #post = () => {
    const requests = this.#requests;
    this.#requests = [];
    this.#thread.postMessage(requests);
  };

  #answered(answer: Answer): void {
    if (answer.type !== "result" && answer.type !== "error") return;
    const waiter = this.#waiters.get(answer.id);
    if (waiter === undefined) return;
    this.#waiters.delete(answer.id);
    if (answer.type === "result") waiter.resolve(answer.value);
    else waiter.reject(rebuild(answer.error));
  }

  #fail(reason: string): void {
    if (this.#broken !== undefined) return;
    this.#broken = workflowError("storage_unavailable", reason);
    for (const waiter of this.#waiters.values()) waiter.reject(this.#broken);
    this.#waiters.clear();
  }
}
