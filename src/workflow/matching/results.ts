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
      settle(state, session, frame.completion.ref, (ref, offeredAt) =>
        state.events.completed(ref, frame.completion.output_json, session.ctx, offeredAt),
      );
      return;
    case "failure":
      settle(state, session, frame.failure.ref, (ref, offeredAt) =>
        state.events.failed(
          ref,
          {
            code: frame.failure.code || "handler_error",
            message: frame.failure.message,
            nonRetryable: frame.failure.non_retryable,
          },
          session.ctx,
          offeredAt,
        ),
      );
      return;
  }
}

function settle(
  state: ResultState,
  session: Session,
  ref: AttemptRef,
  report: (ref: AttemptRef, offeredAt: number) => Promise<void> | void,
): void {
  const key = attemptKey(ref);
  const ack = () => session.sink.push({ frame: "ack", ack: { ref } });
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
    ack();
    return;
  }
  state.holding.delete(key);
  state.settled.remember(key);
  if (!session.closed) state.drain(session, holding.queue);
  if (holding.released) {
    ack();
    return;
  }
  let outcome: Promise<void> | void;
  try {
    outcome = report(ref, holding.offeredAt);
  } catch (error) {
    state.settled.forget(key);
    abort(state, session, `result not accepted: ${String(error)}`);
    return;
  }
  if (!(outcome instanceof Promise)) {
    ack();
    return;
  }
  outcome.then(ack, (error: unknown) => {
    state.settled.forget(key);
    abort(state, session, `result not accepted: ${String(error)}`);
  });
}

function abort(state: ResultState, session: Session, message: string): void {
  state.log.warn({ session: session.id }, `worker stream ended: ${message}`);
  state.close(session);
  session.sink.abort(message);
}
