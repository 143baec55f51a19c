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
import type { MatcherEvents } from "../engine/dispatcher.ts";
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
  offeredAt: number,
): Promise<void> | void {
  if (frame.frame === "completion") {
    const { ref, output_json } = frame.completion;
    return state.events.completed(ref, output_json, session.ctx, offeredAt);
  }
  const { failure } = frame;
  return state.events.failed(
    failure.ref,
    {
      code: failure.code || "handler_error",
      message: failure.message,
      nonRetryable: failure.non_retryable,
    },
    session.ctx,
    offeredAt,
  );
}

function ack(session: Session, ref: AttemptRef): void {
  session.sink.push({ frame: "ack", ack: { ref } });
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
  let outcome: Promise<void> | void;
  try {
    outcome = report(state, session, frame, holding.offeredAt);
  } catch (error) {
    state.settled.forget(key);
    abort(state, session, `result not accepted: ${String(error)}`);
    return;
  }
  if (!(outcome instanceof Promise)) {
    ack(session, ref);
    return;
  }
  outcome.then(
    () => ack(session, ref),
    (error: unknown) => {
      state.settled.forget(key);
      abort(state, session, `result not accepted: ${String(error)}`);
    },
  );
}

function abort(state: ResultState, session: Session, message: string): void {
  state.log.warn({ session: session.id }, `worker stream ended: ${message}`);
  state.close(session);
  session.sink.abort(message);
}
