/**
 * How a worker's result settles an attempt, the rules that make results exactly-once: the
 * engine persists a result and only then is it acknowledged to the worker (which resends
 * unacknowledged results after a reconnect), so none is lost; a resend of a result already
 * reported, or one the session never held, is acknowledged and not reported again; the late
 * result of an attempt the engine released is acknowledged and not reported; a result the
 * engine refuses ends the stream so the worker resends it. The matcher owns the sessions
 * and holdings; these rules read and change them through `ResultState`, apart from the
 * session lifecycle in matcher.ts.
 */

import type { Logger } from "../../common/log.ts";
import { type AttemptRef, attemptKey } from "../../protocol/attempt.ts";
import type { WorkerFrame } from "../../protocol/worker-stream/frames.ts";
import type { MatcherEvents, ResultReceipt } from "../engine/dispatcher.ts";
import { streamRefusal } from "../errors.ts";
import type { Holdings } from "./holdings.ts";
import type { Session } from "./session.ts";
import type { SettledMemory } from "./settled.ts";
import type { TaskQueue } from "./task-queue.ts";

/** What settling a result reads and changes of the matcher. */
export interface ResultState {
  readonly events: MatcherEvents;
  readonly holding: Holdings;
  readonly settled: SettledMemory;
  readonly log: Logger;
  /** Fills the session's freed slot from its queue's backlog. */
  drain(session: Session, queue: TaskQueue): void;
  /** Ends the session (its attempts kept detached), as the matcher's `close`. */
  close(session: Session): void;
}

/** One decoded frame of an open session. Throws a StreamRefusal to end the stream. */
export function receiveFrame(state: ResultState, session: Session, frame: WorkerFrame): void {
  if (session.closed) return;
  switch (frame.frame) {
    case "hello":
      throw streamRefusal("invalid_frame", "hello: a session sends one hello");
    case "heartbeat": {
      const ref = frame.heartbeat.ref;
      if (state.holding.get(attemptKey(ref))?.session === session) {
        state.events.heartbeat?.(ref, frame.heartbeat.details_json, session.ctx);
      }
      return;
    }
    case "completion":
      settle(state, session, frame.completion.ref, frame);
      return;
    case "failure":
      settle(state, session, frame.failure.ref, frame);
      return;
  }
}

type ResultFrame = Extract<WorkerFrame, { frame: "completion" | "failure" }>;

/** Reports a result to the engine (a function of the frame, not a closure per result). */
function report(
  state: ResultState,
  session: Session,
  frame: ResultFrame,
  receipt: Receipt,
  offeredAt: number,
): void {
  if (frame.frame === "completion") {
    const { ref, output_json } = frame.completion;
    state.events.completed(ref, output_json, session.ctx, receipt, offeredAt);
    return;
  }
  const { failure } = frame;
  state.events.failed(
    failure.ref,
    {
      code: failure.code || "handler_error",
      message: failure.message,
      nonRetryable: failure.non_retryable,
    },
    session.ctx,
    receipt,
    offeredAt,
  );
}

function ack(session: Session, ref: AttemptRef): void {
  session.sink.push({ frame: "ack", ack: { ref } });
}

/**
 * A result reported and not yet answered: acknowledged once the engine recorded it, the
 * session ended (the worker resends it) when the engine refused it.
 */
class Receipt implements ResultReceipt {
  readonly #state: ResultState;
  readonly #session: Session;
  readonly #ref: AttemptRef;
  readonly #key: string;

  constructor(state: ResultState, session: Session, ref: AttemptRef, key: string) {
    this.#state = state;
    this.#session = session;
    this.#ref = ref;
    this.#key = key;
  }

  recorded(): void {
    ack(this.#session, this.#ref);
  }

  refused(error: unknown): void {
    this.#state.settled.forget(this.#key);
    abort(this.#state, this.#session, `result not accepted: ${String(error)}`);
  }
}

function settle(state: ResultState, session: Session, ref: AttemptRef, frame: ResultFrame): void {
  const key = attemptKey(ref);
  const holding = state.holding.get(key);
  if (holding?.session !== session) {
    // A resend of a result already reported, or one this session never held: acknowledged
    // so the worker forgets it, never reported twice.
    if (!state.settled.has(key)) {
      state.log.warn(
        { attempt: key, session: session.id },
        "result for an attempt this session does not hold; dropped",
      );
    }
    ack(session, ref);
    return;
  }
  state.holding.delete(key);
  state.settled.remember(key);
  if (!session.closed) state.drain(session, holding.queue);
  if (holding.released) {
    ack(session, ref);
    return;
  }
  const receipt = new Receipt(state, session, ref, key);
  try {
    report(state, session, frame, receipt, holding.offeredAt);
  } catch (error) {
    receipt.refused(error);
  }
}

function abort(state: ResultState, session: Session, message: string): void {
  state.log.warn({ session: session.id }, `worker stream ended: ${message}`);
  state.close(session);
  session.sink.abort(message);
}
