/**
 * How the query sandbox fails: every failure is a SandboxError carrying the store's refusal
 * code (`query_code_error` for the query's own exception, `query_time_limit`,
 * `query_memory_limit`, `query_output_limit`, `query_worker_failed`), made from what
 * QuickJS threw inside the runtime or from a trap of the WebAssembly module
 * (sandbox-memory.ts). The messages are bounded; a query's own message is cut.
 */

import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { QUERY_OUTPUT_DEPTH } from "./limits.ts";

/** Longest error message passed back from the query's own exception (a bound, not a format). */
export const SANDBOX_MESSAGE_BYTES = 1024;

export class SandboxError extends Error {
  readonly code: string;
  /** The failure left the WebAssembly module unusable: the next query needs a new one. */
  readonly brokeModule: boolean;
  constructor(code: string, message: string, brokeModule = false) {
    super(message);
    this.code = code;
    this.brokeModule = brokeModule;
  }
}

export interface SandboxLimits {
  readonly timeMs: number;
  readonly memoryBytes: number;
  readonly outputsPerRecord: number;
}

type CallResult = ReturnType<QuickJSContext["evalCode"]>;

/** The value of a call, or a SandboxError naming the limit or the query's own failure. */
export function unwrap(
  context: QuickJSContext,
  result: CallResult,
  limits?: SandboxLimits,
): QuickJSHandle {
  if (!("error" in result) || result.error === undefined) return result.value;
  return raise(context, result.error, limits);
}

/** Throws the SandboxError for `error`, a thrown QuickJS value (its handle is disposed). */
export function raise(
  context: QuickJSContext,
  error: QuickJSHandle,
  limits?: SandboxLimits,
): never {
  let dumped: unknown;
  try {
    dumped = context.dump(error);
  } finally {
    error.dispose();
  }
  throw fromQuickJS(dumped, limits);
}

function fromQuickJS(dumped: unknown, limits?: SandboxLimits): SandboxError {
  const value = (typeof dumped === "object" && dumped !== null ? dumped : {}) as Record<
    string,
    unknown
  >;
  if (value.skeinLimit === "output") {
    const max = limits?.outputsPerRecord;
    return new SandboxError(
      "query_output_limit",
      `a record gave ${String(value.count)} outputs; query_outputs_per_record is ${max}`,
    );
  }
  if (value.skeinLimit === "depth") {
    return new SandboxError(
      "query_output_limit",
      `an output nests deeper than ${QUERY_OUTPUT_DEPTH} levels of arrays and objects`,
    );
  }
  if (value.name === "InternalError" && value.message === "interrupted") {
    return new SandboxError("query_time_limit", "the query ran past query_time_ms");
  }
  if (value.name === "InternalError" && value.message === "out of memory") {
    return new SandboxError("query_memory_limit", "the query needed more than query_memory_bytes");
  }
  const text =
    typeof value.name === "string" ? `${value.name}: ${String(value.message)}` : String(dumped);
  return new SandboxError("query_code_error", text.slice(0, SANDBOX_MESSAGE_BYTES));
}
