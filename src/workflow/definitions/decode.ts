/**
 * The definition decoder: a workflow document (already parsed from YAML or JSON) into a
 * typed WorkflowDefinition, with every refusal naming the step and field
 * (`steps[2].call.input: bad JSONata expression: …`) and carrying the code
 * `invalid_definition`. A step is an object with an `id` and exactly one shape key (`call`,
 * `parallel`, `collect`, `child`, `wait`, `sleep`); document-level `task_queue`, `retry` and
 * `start_to_close_ms` are defaults for every `call`. Step ids are unique in the whole
 * document (nested steps included), so `steps.<id>` names one output.
 */

import {
  array,
  child as childPath,
  type Decoder,
  described,
  durationMs,
  expectObject,
  finiteNumber,
  formatPath,
  type JsonSchema,
  map,
  object,
  oneOf,
  optional,
  type Path,
  refuse,
  string,
  u32,
  withCode,
  withDefault,
} from "../../common/decode/index.ts";
import { canonicalJson, versionOf } from "./canonical.ts";
import { compileExpression, type Expression, expression } from "./expression.ts";
import { inputSchema } from "./input-schema.ts";
import { type RetryPolicy, STEP_KINDS, type Step, type WorkflowDefinition } from "./types.ts";

export const DEFINITION_CODE = "invalid_definition";

/** Ten years: far past any sensible timeout, well inside a JS number. */
const MAX_MS = 315_360_000_000;

export const RETRY_DEFAULTS: RetryPolicy = {
  maxAttempts: 3,
  initialBackoffMs: 1_000,
  maxBackoffMs: 60_000,
  backoffCoefficient: 2,
  nonRetryableCodes: [],
};
export const START_TO_CLOSE_DEFAULT_MS = 300_000;
export const MAX_STEPS = 1_024;
export const MAX_COLLECT_ITEMS_DEFAULT = 10_000;

const ms = (min = 1) => map(durationMs({ min, max: MAX_MS }), Number);

const name = string({
  minBytes: 1,
  maxBytes: 256,
  pattern: /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
  patternReason: "must be letters, digits, '.', '_' or '-', starting with a letter or digit",
});

const stepId = string({
  minBytes: 1,
  maxBytes: 128,
  pattern: /^[A-Za-z_][A-Za-z0-9_]*$/,
  patternReason:
    "must be letters, digits and '_', not starting with a digit (so `steps.<id>` reads it)",
});

const retryFields = object({
  max_attempts: optional(u32({ min: 1, max: 10_000 })),
  initial_backoff_ms: optional(ms()),
  max_backoff_ms: optional(ms()),
  backoff_coefficient: optional(finiteNumber({ min: 1, max: 100 })),
  non_retryable_codes: optional(array(string({ minBytes: 1, maxBytes: 128 }), { max: 256 })),
});

type RetryFields = ReturnType<typeof retryFields.run>;

function mergeRetry(base: RetryPolicy, fields: RetryFields | undefined, path: Path): RetryPolicy {
  if (fields === undefined) return base;
  const merged: RetryPolicy = {
    maxAttempts: fields.max_attempts ?? base.maxAttempts,
    initialBackoffMs: fields.initial_backoff_ms ?? base.initialBackoffMs,
    maxBackoffMs: fields.max_backoff_ms ?? base.maxBackoffMs,
    backoffCoefficient: fields.backoff_coefficient ?? base.backoffCoefficient,
    nonRetryableCodes: fields.non_retryable_codes ?? base.nonRetryableCodes,
  };
  if (merged.maxBackoffMs < merged.initialBackoffMs) {
    refuse(
      "rule",
      childPath(path, "max_backoff_ms"),
      `must be at least initial_backoff_ms (${merged.initialBackoffMs}), found ${merged.maxBackoffMs}`,
    );
  }
  return merged;
}

interface Defaults {
  readonly taskQueue: string | undefined;
  readonly retry: RetryPolicy;
  readonly startToCloseMs: number;
}

const INPUT = compileExpression("input");

// Each step shape, once; `parallel` and `collect` hold steps, so they take the step decoder
// (the real one when decoding, a `$ref` when the JSON Schema is made from them).
const callShape = object({
  action: name,
  task_queue: optional(name),
  input: withDefault<Expression>(expression(), INPUT),
  retry: optional(retryFields),
  start_to_close_ms: optional(ms()),
  heartbeat_ms: optional(ms()),
});
const parallelShape = (step: Decoder<Step>) =>
  object({ branches: array(step, { min: 1, max: MAX_STEPS }) });
const collectShape = (step: Decoder<Step>) =>
  object({
    items: expression(),
    step,
    max_items: withDefault(u32({ min: 1, max: 1_000_000 }), MAX_COLLECT_ITEMS_DEFAULT),
  });
const childShape = object({
  workflow: name,
  version: optional(
    string({
      pattern: /^sha256:[0-9a-f]{64}$/,
      patternReason: "must be sha256:<64 hex digits>",
    }),
  ),
  input: withDefault<Expression>(expression(), INPUT),
});
const waitShape = object({
  signal: name,
  timeout_ms: optional(ms()),
  on_timeout: withDefault(oneOf(["fail", "continue"]), "fail"),
});
const sleepShape = object({ duration_ms: ms() });

function stepDecoder(defaults: Defaults): Decoder<Step> {
  const self: Decoder<Step> = {
    expected: "step object",
    run(value, path) {
      const raw = expectObject(value, path, "step object");
      const shapes = STEP_KINDS.filter((k) => Object.hasOwn(raw, k));
      if (shapes.length !== 1) {
        const found = Object.keys(raw).filter((k) => k !== "id");
        refuse(
          "shape",
          path,
          `unknown step shape: expected exactly one of ${STEP_KINDS.join(", ")}; found ${found.length === 0 ? "none" : found.join(", ")}`,
        );
      }
      const kind = shapes[0]!;
      const known = new Set(["id", kind]);
      for (const key of Object.keys(raw)) {
        if (!known.has(key)) refuse("unknown", childPath(path, key), "unknown field");
      }
      if (!Object.hasOwn(raw, "id"))
        refuse("missing", childPath(path, "id"), "missing required field (step id)");
      const id = stepId.run(raw.id, childPath(path, "id"));
      const at = childPath(path, kind);
      const body = raw[kind];
      switch (kind) {
        case "call": {
          const c = callShape.run(body, at);
          const taskQueue = c.task_queue ?? defaults.taskQueue;
          if (taskQueue === undefined) {
            refuse(
              "missing",
              childPath(at, "task_queue"),
              "missing task_queue (and the document sets no default)",
            );
          }
          return {
            kind,
            id,
            action: c.action,
            taskQueue,
            input: c.input,
            retry: mergeRetry(defaults.retry, c.retry, childPath(at, "retry")),
            startToCloseMs: c.start_to_close_ms ?? defaults.startToCloseMs,
            heartbeatMs: c.heartbeat_ms ?? 0,
          };
        }
        case "parallel": {
          const p = parallel.run(body, at);
          return { kind, id, branches: p.branches };
        }
        case "collect": {
          const c = collect.run(body, at);
          return { kind, id, items: c.items, body: c.step, maxItems: c.max_items };
        }
        case "child": {
          const c = childShape.run(body, at);
          return { kind, id, workflow: c.workflow, version: c.version, input: c.input };
        }
        case "wait": {
          const w = waitShape.run(body, at);
          return {
            kind,
            id,
            signal: w.signal,
            timeoutMs: w.timeout_ms ?? 0,
            onTimeout: w.on_timeout,
          };
        }
        case "sleep": {
          const s = sleepShape.run(body, at);
          return { kind, id, durationMs: s.duration_ms };
        }
      }
    },
  };
  const parallel = parallelShape(self);
  const collect = collectShape(self);
  return self;
}

/** A step, in schemas: a reference to the definition schema's `$defs/step`. */
const stepRef: Decoder<Step> = described(
  { expected: "step object", run: () => refuse("shape", undefined, "schema only") },
  { $ref: "#/$defs/step" },
);

const header = object({
  name,
  task_queue: optional(name),
  retry: optional(retryFields),
  start_to_close_ms: optional(ms()),
  deadline_ms: optional(ms()),
  output: optional(expression()),
  input_schema: optional(inputSchema),
  // Steps decode in a second pass, with the document's defaults.
  steps: array(described({ expected: "step object", run: (v) => v }, stepRef.schema!), {
    min: 1,
    max: MAX_STEPS,
  }),
});

/**
 * The JSON Schema of a workflow definition document, made from the decoders above: a step
 * is an object with `id` and exactly one shape key. Looser than the decoder where a rule
 * spans fields (a call's task_queue may come from the document, ids must be unique).
 */
export function definitionSchema(): JsonSchema {
  const shapes: Record<(typeof STEP_KINDS)[number], JsonSchema> = {
    call: callShape.schema,
    parallel: parallelShape(stepRef).schema,
    collect: collectShape(stepRef).schema,
    child: childShape.schema,
    wait: waitShape.schema,
    sleep: sleepShape.schema,
  };
  const step = {
    oneOf: STEP_KINDS.map((kind) => ({
      type: "object",
      properties: { id: stepId.schema, [kind]: shapes[kind] },
      required: ["id", kind],
      additionalProperties: false,
    })),
  };
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "Skein workflow definition",
    ...header.schema,
    $defs: { step },
  };
}

/** Every step with its path, depth first (nested steps included), to find duplicate ids. */
function* walk(step: Step, at: Path): Generator<[Step, Path]> {
  yield [step, at];
  if (step.kind === "parallel") {
    const branches = childPath(childPath(at, "parallel"), "branches");
    for (const [i, branch] of step.branches.entries()) yield* walk(branch, childPath(branches, i));
  }
  if (step.kind === "collect") yield* walk(step.body, childPath(childPath(at, "collect"), "step"));
}

const definitionDecoder: Decoder<WorkflowDefinition> = withCode(
  {
    expected: "workflow definition",
    run(value, path) {
      const h = header.run(value, path);
      const defaults: Defaults = {
        taskQueue: h.task_queue,
        retry: mergeRetry(RETRY_DEFAULTS, h.retry, childPath(path, "retry")),
        startToCloseMs: h.start_to_close_ms ?? START_TO_CLOSE_DEFAULT_MS,
      };
      const steps = array(stepDecoder(defaults)).run(h.steps, childPath(path, "steps"));
      const seen = new Map<string, Path>();
      const all = steps.flatMap((step, i) => [
        ...walk(step, childPath(childPath(path, "steps"), i)),
      ]);
      for (const [step, at] of all) {
        const first = seen.get(step.id);
        if (first !== undefined) {
          refuse(
            "rule",
            childPath(at, "id"),
            `duplicate step id ${JSON.stringify(step.id)} (first at ${formatPath(first)})`,
          );
        }
        seen.set(step.id, at);
      }
      const canonical = canonicalJson(value);
      return {
        name: h.name,
        version: versionOf(canonical),
        steps,
        output: h.output,
        deadlineMs: h.deadline_ms ?? 0,
        inputSchema: h.input_schema,
        canonical,
      };
    },
  },
  DEFINITION_CODE,
);

export { definitionDecoder };
