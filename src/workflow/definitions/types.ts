/**
 * The typed form of a workflow definition, produced once by the definition decoder and
 * read by the engine. Every default is filled; durations are milliseconds as JS numbers
 * (bounded well inside 2^53 by the decoder); expressions are compiled.
 */

import type { Expression } from "./expression.ts";
import type { InputSchema } from "./input-schema.ts";

export interface RetryPolicy {
  /** Attempts in all, from 1 (1 = never retry). */
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly backoffCoefficient: number;
  /** Failure codes that are never retried. */
  readonly nonRetryableCodes: readonly string[];
}

export interface CallStep {
  readonly kind: "call";
  readonly id: string;
  readonly action: string;
  readonly taskQueue: string;
  /** The activity input; evaluated when the activity is scheduled. */
  readonly input: Expression;
  readonly retry: RetryPolicy;
  readonly startToCloseMs: number;
  /** 0: no heartbeat timeout. */
  readonly heartbeatMs: number;
}

export interface ParallelStep {
  readonly kind: "parallel";
  readonly id: string;
  /** Run concurrently; the output is an object of their outputs by id. */
  readonly branches: readonly Step[];
}

export interface CollectStep {
  readonly kind: "collect";
  readonly id: string;
  /** Must yield an array; the body runs once per item, with `item` bound. */
  readonly items: Expression;
  readonly body: Step;
  readonly maxItems: number;
}

export interface ChildStep {
  readonly kind: "child";
  readonly id: string;
  readonly workflow: string;
  /** A pinned version (`sha256:…`), or undefined for the latest registered. */
  readonly version: string | undefined;
  readonly input: Expression;
}

export interface WaitStep {
  readonly kind: "wait";
  readonly id: string;
  readonly signal: string;
  /** 0: wait for ever (until the run's deadline). */
  readonly timeoutMs: number;
  /** On timeout: fail the run, or continue with the step's output `null`. */
  readonly onTimeout: "fail" | "continue";
}

export interface SleepStep {
  readonly kind: "sleep";
  readonly id: string;
  readonly durationMs: number;
}

export type Step = CallStep | ParallelStep | CollectStep | ChildStep | WaitStep | SleepStep;
export type StepKind = Step["kind"];

export const STEP_KINDS: readonly StepKind[] = [
  "call",
  "parallel",
  "collect",
  "child",
  "wait",
  "sleep",
];

export interface WorkflowDefinition {
  readonly name: string;
  /** `sha256:<hex>` of the document's canonical form: the version a run pins. */
  readonly version: string;
  readonly steps: readonly Step[];
  /** The run's output; undefined means the last step's output. */
  readonly output: Expression | undefined;
  /** Run deadline from its start; 0: none. When reached the run is cancelled. */
  readonly deadlineMs: number;
  /** What a run's input must satisfy (`input_schema`), enforced at start; undefined: any. */
  readonly inputSchema: InputSchema | undefined;
  /** The canonical JSON text the version hashes (kept so a definition can be shown). */
  readonly canonical: string;
}
