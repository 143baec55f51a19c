/**
 * The thread that owns the SQLite connection. It opens (and migrates) the database named in
 * its `workerData`, says `ready`, then serves calls one at a time, in arrival order: a
 * commit the engine sent before another is durable before the other starts, and a read sees
 * every commit sent before it. Each synced commit blocks only this thread, so the server's
 * event loop keeps reading worker results and dispatching while the WAL syncs.
 */

import { parentPort, workerData } from "node:worker_threads";
import { BackupTurns } from "./backup-turns.ts";
import { unpackCommit } from "./commit-message.ts";
import { SqliteWorkflowStore } from "./store.ts";
import {
  type Answer,
  type Area,
  type Request,
  type ThreadData,
  threadError,
} from "./thread-protocol.ts";

const port = parentPort!;
const { file } = workerData as ThreadData;

function send(answer: Answer): void {
  port.postMessage(answer);
}

/**
 * Answers to calls go out together: those made while one turn of this thread's loop runs
 * (the calls of one batch from the main thread, served one after another) are posted as one
 * message at its end, so the main thread is woken once for them, not once per call.
 */
let answers: Answer[] = [];

function answer(a: Answer): void {
  if (answers.push(a) === 1) setImmediate(flushAnswers);
}

function flushAnswers(): void {
  if (answers.length === 0) return;
  const batch = answers;
  answers = [];
  port.postMessage(batch);
}

function targetOf(store: SqliteWorkflowStore, area: Area): Record<string, unknown> {
  if (area === "definitions" || area === "runs") {
    return store.workflows[area] as unknown as Record<string, unknown>;
  }
  return store[area] as unknown as Record<string, unknown>;
}

function open(): SqliteWorkflowStore | undefined {
  try {
    const store = SqliteWorkflowStore.open(file);
    send({ type: "ready", schemaVersion: store.schemaVersion });
    return store;
  } catch (error) {
    send({ type: "failed", error: threadError(error) });
    port.close();
    return undefined;
  }
}

// Calls run strictly one after another, even though store methods are async.
let queue: Promise<void> = Promise.resolve();
// Backups run one at a time; the one running takes turns with the calls (backup-turns.ts).
let backups: Promise<void> = Promise.resolve();
let turns: BackupTurns | undefined;

const opened = open();
if (opened !== undefined) {
  port.on("message", (requests: Request[]) => {
    for (const request of requests) {
      if (request.type === "backup") {
        backups = backups.then(() => backUp(opened, request.id, request.target));
      } else {
        const turn = turns?.turn();
        queue = queue.then(() => turn).then(() => serve(opened, request));
      }
    }
  });
}

/**
 * Starts the backup from the call queue, so no call is under way at its first step; calls
 * that arrive from now on take turns with its steps. Resolves once the backup has ended and
 * its answer is sent.
 */
function backUp(store: SqliteWorkflowStore, id: number, target: string): Promise<void> {
  const running = new BackupTurns();
  turns = running;
  return new Promise((ended) => {
    queue = queue.then(() => {
      store
        .backup(target, () => running.stepped())
        .then(
          (value) => answer({ type: "result", id, value }),
          (error: unknown) => answer({ type: "error", id, error: threadError(error) }),
        )
        .finally(() => {
          turns = undefined;
          running.ended();
          ended();
        });
    });
  });
}

async function serve(store: SqliteWorkflowStore, request: Request): Promise<void> {
  if (request.type === "backup") return;
  if (request.type === "commit") {
    try {
      await store.workflows.runs.commitEncoded(unpackCommit(request.batch));
      answer({ type: "result", id: request.id, value: undefined });
    } catch (error) {
      answer({ type: "error", id: request.id, error: threadError(error) });
    }
    return;
  }
  if (request.type === "close") {
    await store.close();
    answer({ type: "result", id: request.id, value: undefined });
    flushAnswers();
    port.close();
    return;
  }
  try {
    const target = targetOf(store, request.area);
    const method = target[request.method] as (...args: unknown[]) => Promise<unknown>;
    const value = await method.apply(target, request.args);
    answer({ type: "result", id: request.id, value });
  } catch (error) {
    answer({ type: "error", id: request.id, error: threadError(error) });
  }
}
