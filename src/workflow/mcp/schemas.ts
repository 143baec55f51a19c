/**
 * JSON Schemas of the tools' answers: what each route answers (docs/http-api.md), loose
 * where a route's answer is open (events, transcript entries, outputs), since a client
 * checks every structured answer against its tool's output schema.
 */

import type { JsonSchema } from "../../common/decode/index.ts";

const str = { type: "string" };
const int = { type: "integer" };
const bool = { type: "boolean" };
const anyValue = { description: "any JSON value" };
const nullableStr = { type: ["string", "null"] };

export const STATUS = {
  type: "string",
  enum: ["Running", "Paused", "Completed", "Failed", "Cancelled"],
};

export function obj(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return { type: "object", properties, required };
}

export const RUN = obj(
  {
    namespace: str,
    workflow_id: str,
    run_id: str,
    definition_version: str,
    definition_name: str,
    status: STATUS,
    started_at: str,
    updated_at: str,
    ended_at: nullableStr,
    output: anyValue,
    failure: { anyOf: [obj({ code: str, message: str }, ["code", "message"]), { type: "null" }] },
  },
  ["namespace", "workflow_id", "run_id", "status"],
);

export const DESCRIBED = obj(
  {
    run: RUN,
    pending_activities: { type: "array", items: { type: "object" } },
    pending_total: int,
  },
  ["run"],
);

export const STARTED = obj(
  {
    namespace: str,
    workflow_id: str,
    run_id: str,
    definition_version: str,
    created: bool,
    run: { ...RUN, description: "the run as workflow_describe shows it, when waited for" },
  },
  ["namespace", "workflow_id", "run_id", "definition_version", "created"],
);

export const RUN_PAGE = obj({ runs: { type: "array", items: RUN }, next_cursor: nullableStr }, [
  "runs",
  "next_cursor",
]);

export const HISTORY_PAGE = obj(
  {
    workflow_id: str,
    run_id: str,
    events: { type: "array", items: { type: "object" } },
    next: { type: ["integer", "null"] },
  },
  ["workflow_id", "run_id", "events", "next"],
);

export const CONTROLLED = obj({ workflow_id: str, run_id: str, applied: bool, status: STATUS }, [
  "workflow_id",
  "run_id",
  "applied",
  "status",
]);

export const CANCELLED = obj(
  {
    ...(CONTROLLED.properties as Record<string, JsonSchema>),
    descendants: {
      type: "array",
      description: "the run's descendants as they were when it was cancelled",
      items: obj(
        {
          workflow_id: str,
          run_id: str,
          parent_run_id: str,
          definition_name: str,
          status: STATUS,
          reached: { ...bool, description: "true when the cascade cancels it" },
        },
        ["workflow_id", "run_id", "status", "reached"],
      ),
    },
    descendants_truncated: bool,
  },
  ["workflow_id", "run_id", "applied", "status", "descendants"],
);

export const DEFINITIONS = obj(
  {
    namespace: str,
    definitions: {
      type: "array",
      items: obj(
        {
          name: str,
          version: str,
          registered_at: str,
          registered_by: str,
          versions: int,
          input_schema: { anyOf: [{ type: "object" }, { type: "null" }] },
        },
        ["name", "version"],
      ),
    },
  },
  ["namespace", "definitions"],
);

export const NAMESPACES = obj(
  { namespaces: { type: "array", items: obj({ name: str }, ["name"]) } },
  ["namespaces"],
);

export const ATTEMPTS = obj(
  {
    attempts: {
      type: "array",
      items: obj(
        {
          run_id: str,
          activity_id: int,
          attempt: int,
          capabilities: { type: "array", items: str },
          pending_approvals: {
            type: "array",
            description: "tool calls waiting for RespondToApproval (call_id, tool, arguments)",
            items: obj({ call_id: anyValue, tool: anyValue, arguments: anyValue }, ["call_id"]),
          },
        },
        ["run_id", "activity_id", "attempt", "capabilities"],
      ),
    },
  },
  ["attempts"],
);

export const TRANSCRIPT_PAGE = obj(
  { entries: { type: "array", items: { type: "object" } }, next: { type: ["integer", "null"] } },
  ["entries", "next"],
);

export const OUTCOME = obj(
  {
    outcome: obj(
      { outcome: { type: "string", enum: ["Applied", "CapabilityNotSupported", "StaleTarget"] } },
      ["outcome"],
    ),
  },
  ["outcome"],
);
