/**
 * The builtin worker's catalogue of attempt failure codes: every code a worker reports in a
 * failure frame, declared once, so docs/workers.md's failure table lists exactly these
 * (test/worker/failures.test.ts checks both ways). The server records the code in the run's
 * history, where the run's retry policy (`non_retryable_codes`) may switch on it. A module
 * handler may fail with a code of its own; that one is the handler's, not the worker's. The
 * second section is what `skein worker` refuses to start with (docs/workers.md, both ways).
 */

import { SkeinError } from "../common/errors.ts";

export const ACTIVITY_FAILURES = {
  handler_error: "a module handler threw without a snake_case code of its own",
  exit_status: "an exec command exited non-zero or was killed by a signal",
  spawn_failed: "an exec command could not be started",
  bad_output: "the output is not one JSON value, too large, or not serialisable",
  http_status: "an http action was answered with a status outside 2xx",
  http_error: "an http action's request failed in transport",
  bad_input: "an http URL placeholder names no scalar input field",
  start_to_close_timeout: "the attempt ran past its start_to_close_ms",
  cancelled: "the server cancelled the attempt",
  worker_stopped: "the worker is stopping",
  unknown_action: "the task names an action the worker's document does not declare",
  budget_exhausted: "an agent spent its max_turns or max_tokens",
  model_error: "an agent's model endpoint answered an error",
  mcp_unavailable:
    "an agent's MCP server could not be connected to or listed at the attempt's start",
  pass_unavailable:
    "an agent's MCP server pass could not be obtained (token endpoint, credential file)",
  branch_invalid: "an agent's MCP branch expression did not give a branch name",
} as const;

export type ActivityFailureCode = keyof typeof ACTIVITY_FAILURES;

/** Why `skein worker` does not start, besides usage errors and refused documents. */
export const WORKER_REFUSALS = {
  token_file_unreadable: "the --token-file cannot be read (absent, not a file, too large)",
  token_file_invalid: "the --token-file does not hold exactly one token",
} as const;

export function workerRefusal(code: keyof typeof WORKER_REFUSALS, message: string): SkeinError {
  return new SkeinError(code, message);
}
