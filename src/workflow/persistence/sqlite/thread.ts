/**
 * The thread that owns the SQLite connection. It opens (and migrates) the database named in
 * its `workerData`, says `ready`, then serves calls one at a time, in arrival order: a
 * commit the engine sent before another is durable before the other starts, and a read sees
 * every commit sent before it. Each synced commit blocks only this thread, so the server's
 * event loop keeps reading worker results and dispatching while the WAL syncs.
 */

import { parentPort, workerData } from "node:worker_threads";
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

const opened = open();
if (opened !== undefined) {
  // Calls run strictly one after another, even though store methods are async.
  let queue: Promise<void> = Promise.resolve();
  port.on("message", (request: Request) => {
    // A backup copies pages on the thread pool while calls go on over the same connection
    // (SQLite carries their changes into the copy), so it does not hold the queue.
    if (request.type === "backup") void backUp(opened, request.id, request.target);
    else queue = queue.then(() => serve(opened, request));
  });
}

async function backUp(store: SqliteWorkflowStore, id: number, target: string): Promise<void> {
  try {
    send({ type: "result", id, value: await store.backup(target) });
  } catch (error) {
    send({ type: "error", id, error: threadError(error) });
  }
}

async function serve(store: SqliteWorkflowStore, request: Request): Promise<void> {
  if (request.type !== "call" && request.type !== "close") return;
  if (request.type === "close") {
    await store.close();
    send({ type: "result", id: request.id, value: undefined });
    port.close();
    return;
  }
  try {
    const target = targetOf(store, request.area);
    const method = target[request.method] as (...args: unknown[]) => Promise<unknown>;
    const value = await method.apply(target, request.args);
    send({ type: "result", id: request.id, value });
  } catch (error) {
    send({ type: "error", id: request.id, error: threadError(error) });
  }
}
