/**
 * A run's inbox: how inputs (worker results, signals, timers, the engine's own events) reach
 * a run. An input lands in the run's inbox, the run is marked dirty, and one tick is
 * scheduled for every dirty run together (group-commit.ts processes it). This module is the
 * only way in, so the roles that produce inputs (attempts.ts, run-tree.ts, recovery.ts)
 * depend on the inbox, never on the commit pipeline that drains it.
 */

import type { EngineCore } from "./core.ts";
import { stoppedError } from "./core.ts";
import type { ResultReceipt } from "./dispatcher.ts";
import type { HistoryEvent } from "./history.ts";
import type { InboxItem, Run } from "./run.ts";

/** For the engine's own events (timers, timeouts): nobody waits, so a refusal is dropped. */
export function enqueueInternal(core: EngineCore, run: Run, event: HistoryEvent): void {
  enqueue(core, run, event).catch(() => {});
}
export function enqueue(core: EngineCore, run: Run, event: HistoryEvent): Promise<void> {
  if (core.stopped) return Promise.reject(stoppedError());
  return new Promise((done, fail) => {
    deliver(core, run, { event, done, fail });
  });
}

/** A worker's result: the matcher's receipt is told once it is durable, or refused. */
export function enqueueResult(
  core: EngineCore,
  run: Run,
  event: HistoryEvent,
  receipt: ResultReceipt,
): void {
  if (core.stopped) receipt.refused(stoppedError());
  else deliver(core, run, new ReceiptItem(event, receipt));
}

/** An inbox item that answers a receipt, once (as a promise settles once). */
class ReceiptItem implements InboxItem {
  readonly event: HistoryEvent;
  #receipt: ResultReceipt | undefined;

  constructor(event: HistoryEvent, receipt: ResultReceipt) {
    this.event = event;
    this.#receipt = receipt;
  }

  done(): void {
    const receipt = this.#receipt;
    this.#receipt = undefined;
    receipt?.recorded();
  }

  fail(error: unknown): void {
    const receipt = this.#receipt;
    this.#receipt = undefined;
    receipt?.refused(error);
  }
}

function deliver(core: EngineCore, run: Run, item: InboxItem): void {
  // A run's first input of a tick makes an array of one: `[]` and a push reserves 17 slots
  // (about 150 bytes) for what is one item most of the time.
  if (run.inbox.length === 0) run.inbox = [item];
  else run.inbox.push(item);
  markDirty(core, run);
}
export function markDirty(core: EngineCore, run: Run): void {
  core.dirty.add(run);
  if (core.scheduled || core.ticking || core.stopped) return;
  core.scheduled = true;
  setImmediate(core.tickNow);
}
