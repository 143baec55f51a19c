/**
 * The evaluator thread: evaluates JSONata expressions for the server under the guardrails of
 * expression-limits.ts, one request at a time in arrival order (the supervisor relies on
 * that order to know which request a hang belongs to). A request carries the source and the
 * scope; the answer is the result as JSON text, or the error message. Compiled expressions
 * are cached by source, since a definition's expressions are evaluated again and again.
 */

import { parentPort } from "node:worker_threads";
import jsonata from "jsonata";
import type { RunFailureCode } from "../errors.ts";
import {
  EXPRESSION_RESULT_LIMIT,
  GUARDRAILS,
  guardrailMessage,
  RESULT_TOO_LARGE,
} from "./expression-limits.ts";

export interface EvaluateRequest {
  readonly id: number;
  readonly source: string;
  readonly scope: { readonly input: unknown; readonly steps: unknown; readonly item: unknown };
}

/** `ready` once, when the thread can evaluate; then one `result` or `error` per request. */
export type EvaluateAnswer =
  | { readonly type: "ready" }
  | { readonly type: "result"; readonly id: number; readonly json: string }
  | {
      readonly type: "error";
      readonly id: number;
      readonly code: string;
      readonly message: string;
    };

/** Distinct sources kept compiled; the cache starts over past it (definitions are few). */
const CACHE_LIMIT = 10_000;
const cache = new Map<string, jsonata.Expression>();

function compiled(source: string): jsonata.Expression {
  let expression = cache.get(source);
  if (expression === undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    expression = jsonata(source, GUARDRAILS);
    cache.set(source, expression);
  }
  return expression;
}

async function answer(
  request: EvaluateRequest,
): Promise<Exclude<EvaluateAnswer, { type: "ready" }>> {
  try {
    const value = await compiled(request.source).evaluate(request.scope);
    // JSONata yields `undefined` for "no match" and can yield functions; JSON has neither.
    const json = JSON.stringify(value) ?? "null";
    if (json.length > EXPRESSION_RESULT_LIMIT) {
      return {
        type: "error",
        id: request.id,
        code: "expression_failed" satisfies RunFailureCode,
        message: RESULT_TOO_LARGE,
      };
    }
    return { type: "result", id: request.id, json };
  } catch (error) {
    return {
      type: "error",
      id: request.id,
      code: "expression_failed" satisfies RunFailureCode,
      message: describe(error),
    };
  }
}

/** JSONata throws plain objects with a code, a message and a position. */
function describe(error: unknown): string {
  const e = error as { code?: unknown; message?: string; position?: number };
  const message = guardrailMessage(e.code) ?? e.message ?? String(error);
  return `${message}${e.position === undefined ? "" : ` (at position ${e.position})`}`;
}

parentPort!.on("message", async (request: EvaluateRequest) => {
  parentPort!.postMessage(await answer(request));
});
parentPort!.postMessage({ type: "ready" } satisfies EvaluateAnswer);
