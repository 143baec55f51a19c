/**
 * The `module` kind: an action is an exported async function of a JavaScript or TypeScript
 * module (a path relative to the worker document). The function receives the parsed input and
 * a context with an AbortSignal and `heartbeat`; its resolved value, JSON-encoded, is the
 * output. A thrown error with a string `code` keeps that code, and `nonRetryable: true` on it
 * stops retries. An abort ends the attempt at once even if the function ignores its signal.
 */

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type Decoded, object, string, withDefault } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import {
  type ActivityContext,
  ActivityError,
  abortError,
  type Handler,
  handlerFailure,
} from "../handler.ts";

export const moduleAction = object({
  module: string({ minBytes: 1 }),
  export: withDefault(string({ minBytes: 1 }), "default"),
});

export type ModuleAction = Decoded<typeof moduleAction>;

export type ActivityFunction = (input: unknown, ctx: ActivityContext) => unknown;

/** Loads the module at start-up, so a wrong path or export name stops the worker early. */
export async function moduleHandler(
  name: string,
  action: ModuleAction,
  baseDir: string,
): Promise<Handler> {
  const file = resolve(baseDir, action.module);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SkeinError(
      "worker_document_invalid",
      `actions.${name}.module: cannot load ${file}: ${reason}`,
    );
  }
  const fn = loaded[action.export];
  if (typeof fn !== "function") {
    throw new SkeinError(
      "worker_document_invalid",
      `actions.${name}.export: ${file} has no exported function ${JSON.stringify(action.export)}`,
    );
  }
  const activity = fn as ActivityFunction;
  return async (inputJson, ctx) => {
    const input: unknown = JSON.parse(inputJson);
    const result = await untilAborted(
      Promise.resolve().then(() =>
        ctx.signal.aborted ? Promise.reject(abortError(ctx.signal)) : activity(input, ctx),
      ),
      ctx.signal,
    );
    let text: string | undefined;
    try {
      text = JSON.stringify(result === undefined ? null : result);
    } catch (error) {
      throw new ActivityError("bad_output", `result is not JSON-serialisable: ${String(error)}`, {
        nonRetryable: true,
      });
    }
    return text ?? "null";
  };
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((done, fail) => {
    const onAbort = () => fail(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        done(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        fail(asActivityError(error, signal));
      },
    );
  });
}

function asActivityError(error: unknown, signal: AbortSignal): ActivityError {
  if (error instanceof ActivityError) return error;
  if (signal.aborted) return abortError(signal);
  const e = error as { code?: unknown; message?: unknown; nonRetryable?: unknown } | null;
  const code =
    typeof e?.code === "string" && /^[a-z][a-z0-9_]*$/.test(e.code) ? e.code : "handler_error";
  const message = typeof e?.message === "string" ? e.message : String(error);
  return handlerFailure(code, message, { nonRetryable: e?.nonRetryable === true });
}
