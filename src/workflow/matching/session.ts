/**
 * A worker session as the matcher sees it: what the worker declared in its hello, how many
 * attempts are assigned to it, and the `SessionSink` its frames go out through. The matcher
 * knows nothing of gRPC: the stream adapter (rpc/worker-stream.ts) implements the sink.
 */

import type { DecodedHello } from "../../protocol/worker-stream/decode.ts";
import type { ServerFrame } from "../../protocol/worker-stream/frames.ts";
import type { ResultContext } from "../engine/dispatcher.ts";

/** Where a session's frames go: the transport behind one worker stream. */
export interface SessionSink {
  /** Queues a frame for the worker (the transport may batch frames of one turn). */
  push(frame: ServerFrame): void;
  /** Writes the queued frames now. */
  flush(): void;
  /** The session is closed: queued frames are dropped and nothing more is written. */
  closed(): void;
  /** Ends the stream because a result was not accepted (the worker resends it elsewhere). */
  abort(message: string): void;
}

export interface Session {
  readonly id: string;
  readonly hello: DecodedHello;
  readonly ctx: ResultContext;
  readonly actions: ReadonlyMap<string, readonly string[]>;
  /**
   * Attempts assigned to it (held with it as their session: holdings.ts keeps the count);
   * the records themselves are the matcher's holdings.
   */
  busy: number;
  readonly sink: SessionSink;
  closed: boolean;
}

/** Whether a session has a free handler slot for `action`. */
export function hasSlotFor(session: Session, action: string): boolean {
  return session.busy < session.hello.concurrency && session.actions.has(action);
}
