/**
 * The bounds every JSONata evaluation runs under, shared by the registration checks
 * (expression.ts), the evaluator thread (expression-worker.ts) and its supervisor
 * (expression-evaluator.ts). JSONata's own guardrails stop an evaluation at its next step
 * once it runs too long, nests too deep or builds too long a sequence; every regex runs on
 * V8's linear-time engine, so no match can backtrack catastrophically; and what a guardrail
 * cannot interrupt (one native call over a huge value: `$string` of a shared-subtree object,
 * `$pad` to a gigabyte) is stopped by the evaluator thread's hard deadline and heap limit.
 * A hit bound is an `expression_failed` error whose message names the limit.
 */

import { setFlagsFromString } from "node:v8";
import type { SkeinError } from "../../common/errors.ts";
import { runFailure } from "../errors.ts";

/** Wall time one evaluation may take: normal expressions take microseconds; a run's step
 * must not hold the evaluator (and every other run's step) for longer than this. */
export const EXPRESSION_TIME_LIMIT_MS = 1_000;

/** Extra time past EXPRESSION_TIME_LIMIT_MS before the evaluator thread is terminated: the
 * guardrail is checked between steps, so a single native call can overrun it. */
export const EXPRESSION_HARD_GRACE_MS = 1_000;

/** JSONata's nesting of evaluation steps (AST nesting plus function calls): far above what a
 * data-mapping expression needs, and far below the thread's native stack. */
export const EXPRESSION_DEPTH_LIMIT = 1_000;

/** Items in one sequence (a range `[1..n]`, `$append`, a path's results): a collect may take
 * up to 1,000,000 items (max_items' ceiling), so its `items` must be able to yield them. */
export const EXPRESSION_SEQUENCE_LIMIT = 1_000_000;

/** UTF-16 code units of an evaluation's result as JSON: it goes into the run's history
 * (an activity's input, a child's input, the run's output). */
export const EXPRESSION_RESULT_LIMIT = 16 * 1024 * 1024;

/** Old-generation heap of the evaluator thread, MB: room for a large run input and its
 * step outputs, while a value that doubles per step is stopped long before the server's
 * own heap is at risk. */
export const EXPRESSION_HEAP_LIMIT_MB = 512;

/** Nesting of the expression's syntax tree, refused at registration: deeper than any
 * written expression, and it keeps the evaluation depth for function calls. */
export const EXPRESSION_NESTING_LIMIT = 100;

/** Bytes of an expression's source, refused at registration. */
export const EXPRESSION_SOURCE_LIMIT = 65_536;

// V8's linear-time regex engine (the `l` flag) is off by default. V8 flags are process-wide
// and read when a regex is compiled, so turning it on here covers this thread and the
// evaluator thread; it changes no regex that does not ask for `l`.
setFlagsFromString("--enable-experimental-regexp-engine");

/** A regex on the linear-time engine; throws when the pattern cannot run in linear time
 * (backreferences, some lookarounds, large nested counted repetitions). */
export function linearRegExp(regex: RegExp): RegExp {
  return new RegExp(regex.source, regex.flags.includes("l") ? regex.flags : `${regex.flags}l`);
}

/** The RegexEngine JSONata constructs for each regex literal it evaluates. */
export const LinearRegExp = linearRegExp as unknown as RegExpConstructor;

/** JSONata's guardrail options for every evaluation. */
export const GUARDRAILS = {
  timeout: EXPRESSION_TIME_LIMIT_MS,
  stack: EXPRESSION_DEPTH_LIMIT,
  sequence: EXPRESSION_SEQUENCE_LIMIT,
  RegexEngine: LinearRegExp,
};

export const RESULT_TOO_LARGE = `the result exceeded the size limit of ${EXPRESSION_RESULT_LIMIT} characters of JSON`;

export const timeLimitExceeded = () =>
  limitError(`exceeded the time limit of ${EXPRESSION_TIME_LIMIT_MS} ms`);
export const memoryLimitExceeded = () =>
  limitError(`exceeded the memory limit of ${EXPRESSION_HEAP_LIMIT_MB} MB`);

/** The message of a JSONata guardrail error, naming our limit; undefined for other errors. */
export function guardrailMessage(code: unknown): string | undefined {
  switch (code) {
    case "D1011":
      return `exceeded the depth limit of ${EXPRESSION_DEPTH_LIMIT} nested evaluation steps (unbounded recursion?)`;
    case "D1012":
      return `exceeded the time limit of ${EXPRESSION_TIME_LIMIT_MS} ms`;
    case "D2014":
    case "D2015":
      return `exceeded the sequence limit of ${EXPRESSION_SEQUENCE_LIMIT} items`;
    default:
      return undefined;
  }
}

function limitError(what: string): SkeinError {
  return runFailure("expression_failed", what);
}
