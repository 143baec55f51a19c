/**
 * What every worker kind provides: a handler per action that turns an attempt's input JSON
 * text into output JSON text, honours an AbortSignal (cancel-activity frames, the
 * start-to-close timeout, worker shutdown) and may report progress through `heartbeat`. A
 * handler fails by throwing an ActivityError, whose code and retryability travel to the
 * server in the failure frame.
 */

import { SkeinError } from "../common/errors.ts";
import type { ActivityFailureCode } from "./failures.ts";

export interface ActivityContext {
  readonly signal: AbortSignal;
  /** Reports liveness, with optional JSON-serialisable progress details. */
  heartbeat(details?: unknown): void;
  readonly namespace: string;
  readonly workflowId: string;
  readonly runId: string;
  readonly activityId: number;
  readonly attempt: number;
  readonly action: string;
}

/** Runs one attempt: input JSON text in, output JSON text out. */
export type Handler = (inputJson: string, ctx: ActivityContext) => Promise<string>;

/** A failed attempt. `nonRetryable` tells the engine not to try again. */
export class ActivityError extends SkeinError {
  readonly nonRetryable: boolean;

  constructor(
    code: ActivityFailureCode,
    message: string,
    options: { nonRetryable?: boolean; cause?: unknown } = {},
  ) {
    super(code, message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = "ActivityError";
    this.nonRetryable = options.nonRetryable ?? false;
  }
}

/**
 * A module handler's failure under a code of its own (a snake_case `code` on what it threw):
 * the code is the handler's, so it is outside the worker's catalogue.
 */
export function handlerFailure(
  code: string,
  message: string,
  options: { nonRetryable?: boolean } = {},
): ActivityError {
  return Object.assign(new ActivityError("handler_error", message, options), { code });
}

/** The error an aborted handler ends with: cancelled by the server, timed out, or shutdown. */
export function abortError(signal: AbortSignal): ActivityError {
  const reason = signal.reason;
  if (reason instanceof ActivityError) return reason;
  const message = reason instanceof Error ? reason.message : String(reason ?? "aborted");
  return new ActivityError("cancelled", message, { nonRetryable: true });
}

/** Checks that text is one JSON value; returns it trimmed, so numbers keep their exact text. */
export function checkJsonText(text: string, what: string): string {
  const trimmed = text.trim();
  try {
    JSON.parse(trimmed);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ActivityError("bad_output", `${what} is not one JSON value: ${reason}`);
  }
  return trimmed;
}

/** The last `max` bytes of a text, marked when cut: for stderr and response-body tails. */
export function tail(text: string, max = 2048): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text.trimEnd();
  return `…${bytes
    .subarray(bytes.length - max)
    .toString("utf8")
    .trimEnd()}`;
}
