/**
 * The endpoint's fixed tools, one per HTTP route an agent uses (docs/mcp-workflows.md). Each
 * input schema is the route's own body decoder's schema (the one /openapi.json shows), so a
 * tool cannot drift from its route; a few tools add what an agent needs on top of a route:
 * `workflow_start` may wait for the run's end, `workflow_cancel` says which descendants the
 * cascade reaches, `attempts_list` shows each attempt's pending approvals, and pages are
 * smaller by default. Composed tools call each route as the caller, so each step is
 * authorized as that route is.
 */

import { type Decoder, integer, type JsonSchema, schemaOf } from "../../common/decode/index.ts";
import { attemptsBody, interveneBody, transcriptBody } from "../http/agents.ts";
import {
  definitionsQuery,
  describeBody,
  historyBody,
  listBody,
  runBody,
  signalBody,
  startBody,
} from "../http/workflows.ts";
import { DESCRIBE_WAIT_MAX_MS } from "../runs/ends.ts";
import { pendingApprovals } from "./approvals.ts";
import { cancelWithDescendants } from "./descendants.ts";
import { query } from "./routes.ts";
import {
  ATTEMPTS,
  CANCELLED,
  CONTROLLED,
  DEFINITIONS,
  DESCRIBED,
  HISTORY_PAGE,
  NAMESPACES,
  OUTCOME,
  RUN_PAGE,
  STARTED,
  TRANSCRIPT_PAGE,
} from "./schemas.ts";
import {
  answer,
  scoped,
  type Tool,
  type ToolArgs,
  type ToolContext,
  withProgress,
} from "./tool.ts";

/** Events or transcript entries a page holds when the caller names no `limit`. */
export const TOOL_PAGE_DEFAULT = 100;

const waitMs = integer("u32", { max: DESCRIBE_WAIT_MAX_MS });
const WAIT_SCHEMA = {
  ...schemaOf(waitMs),
  description: `wait up to this many ms (at most ${DESCRIBE_WAIT_MAX_MS}) for the run to end`,
};

/** A route body's schema with fields added (and their descriptions). */
function input(decoder: Decoder<unknown>, extra: Record<string, JsonSchema> = {}): JsonSchema {
  const schema = schemaOf(decoder) as { properties?: Record<string, JsonSchema> };
  return { ...schema, properties: { ...schema.properties, ...extra } };
}

/** A tool that is its route, body for body. */
function routeTool(
  spec: Omit<Tool, "call" | "inputSchema">,
  path: string,
  decoder: Decoder<unknown>,
  defaults: ToolArgs = {},
): Tool {
  return {
    ...spec,
    inputSchema: input(decoder),
    call: (args, context) =>
      context.routes("POST", path, { ...defaults, ...scoped(args, context) }),
  };
}

const PAGE = {
  type: "integer",
  minimum: 1,
  maximum: 10_000,
  default: TOOL_PAGE_DEFAULT,
  description: `at most this many per page (default ${TOOL_PAGE_DEFAULT})`,
};

/** `wait_ms` of a composed tool, decoded before anything is done. */
function decodedWait(args: ToolArgs): number {
  return args.wait_ms === undefined
    ? 0
    : waitMs.run(args.wait_ms, { parent: undefined, key: "wait_ms" });
}

async function describeWaiting(context: ToolContext, body: ToolArgs, wait: number) {
  const described = context.routes("POST", "/workflows/describe", { ...body, wait_ms: wait });
  return wait === 0
    ? described
    : withProgress(context, wait, "waiting for the run to end", described);
}

const namespacesList: Tool = {
  name: "namespaces_list",
  title: "List namespaces",
  description:
    "Lists the namespaces this bearer may use (workflows, definitions and runs live in one).",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  outputSchema: NAMESPACES,
  readOnly: true,
  destructive: false,
  call: (_args, context) => context.routes("GET", "/namespaces"),
};

const definitionsList: Tool = {
  name: "definitions_list",
  title: "List workflow definitions",
  description:
    "Lists the workflow definitions of a namespace (default: this endpoint's), each with its " +
    "latest version and input_schema. Start one with workflow_start, or with its run_<name> tool.",
  inputSchema: input(definitionsQuery),
  outputSchema: DEFINITIONS,
  readOnly: true,
  destructive: false,
  call(args, context) {
    // The route reads a query string: its decoder judges the arguments here, as it would there.
    const { namespace } = definitionsQuery.run(scoped(args, context), undefined);
    return context.routes("GET", `/workflows/definitions${query({ namespace })}`);
  },
};

const workflowStart: Tool = {
  name: "workflow_start",
  title: "Start a workflow run",
  description:
    "Starts a run of a registered definition with an input (checked against its input_schema). " +
    "Idempotent on workflow_id. With wait_ms, waits for the run to end and returns it with its " +
    "output (run.output) or failure; a run still going after wait_ms comes back Running.",
  inputSchema: input(startBody, { wait_ms: WAIT_SCHEMA }),
  outputSchema: STARTED,
  readOnly: false,
  destructive: false,
  async call(args, context) {
    const { wait_ms: _, ...body } = args;
    const wait = decodedWait(args);
    const started = await context.routes("POST", "/workflows/start", scoped(body, context));
    if (wait === 0) return started;
    const { namespace, workflow_id } = started.value as { namespace: string; workflow_id: string };
    const described = await describeWaiting(context, { namespace, workflow_id }, wait);
    return answer({ ...started.value, run: described.value.run });
  },
};

const workflowDescribe: Tool = {
  name: "workflow_describe",
  title: "Describe a run",
  description:
    "A run's status, output or failure, and its pending activities (why it is stuck). With " +
    "wait_ms, answers once the run has ended or wait_ms has passed: wait on a run this way " +
    "instead of polling.",
  inputSchema: input(describeBody),
  outputSchema: DESCRIBED,
  readOnly: true,
  destructive: false,
  call(args, context) {
    const wait = decodedWait(args);
    return describeWaiting(context, scoped(args, context), wait);
  },
};

const workflowCancel: Tool = {
  name: "workflow_cancel",
  title: "Cancel a run and its descendants",
  description:
    "Cancels a Running or Paused run: its activities and live agent attempts are stopped and " +
    "every Running or Paused descendant (child runs, their children) is cancelled in turn. " +
    "Answers which descendants the cascade reaches.",
  inputSchema: input(runBody),
  outputSchema: CANCELLED,
  readOnly: false,
  destructive: true,
  call: (args, context) => cancelWithDescendants(context, scoped(args, context)),
};

const attemptsList: Tool = {
  name: "attempts_list",
  title: "List a run's live attempts",
  description:
    "The live activity attempts of a workflow's run with the interventions each accepts " +
    "(capabilities) and, for agent attempts, the tool calls waiting for an approval: answer " +
    "one with intervene kind RespondToApproval to act as the reviewer of that agent.",
  inputSchema: input(attemptsBody),
  outputSchema: ATTEMPTS,
  readOnly: true,
  destructive: false,
  async call(args, context) {
    const body = scoped(args, context);
    const listed = await context.routes("POST", "/workflows/attempts", body);
    const attempts = await Promise.all(
      (listed.value.attempts as Record<string, unknown>[]).map(async (a) => ({
        ...a,
        pending_approvals: (a.capabilities as string[]).includes("RespondToApproval")
          ? await pendingApprovals(context, {
              namespace: body.namespace,
              workflow_id: body.workflow_id,
              ...a,
            })
          : [],
      })),
    );
    return answer({ attempts });
  },
};

const CONTROL = (verb: string, title: string, description: string): Tool =>
  routeTool(
    {
      name: `workflow_${verb}`,
      title,
      description,
      outputSchema: CONTROLLED,
      readOnly: false,
      destructive: false,
    },
    `/workflows/${verb}`,
    verb === "signal" ? signalBody : runBody,
  );

export const TOOLS: readonly Tool[] = [
  namespacesList,
  definitionsList,
  workflowStart,
  workflowDescribe,
  routeTool(
    {
      name: "workflow_list",
      title: "List runs",
      description:
        "Lists a namespace's runs by start time (oldest or newest first), filtered by status, " +
        "definition and start time; pass next_cursor as cursor for the next page.",
      outputSchema: RUN_PAGE,
      readOnly: true,
      destructive: false,
    },
    "/workflows/list",
    listBody,
  ),
  {
    ...routeTool(
      {
        name: "workflow_history",
        title: "Read a run's history",
        description:
          "A page of a run's durable events in order from index after; next is the after of " +
          "the next page (null at the end).",
        outputSchema: HISTORY_PAGE,
        readOnly: true,
        destructive: false,
      },
      "/workflows/history",
      historyBody,
      { limit: TOOL_PAGE_DEFAULT },
    ),
    inputSchema: input(historyBody, { limit: PAGE }),
  },
  CONTROL(
    "signal",
    "Signal a run",
    "Sends a named signal (with a payload) to a Running or Paused run; a wait step of that name takes it.",
  ),
  CONTROL(
    "pause",
    "Pause a run",
    "Stops a Running run from dispatching anything new; work in flight finishes.",
  ),
  CONTROL("resume", "Resume a run", "Lets a Paused run go on."),
  workflowCancel,
  attemptsList,
  {
    ...routeTool(
      {
        name: "transcript_read",
        title: "Read an agent attempt's transcript",
        description:
          "A page of an agent attempt's transcript (turns, tool calls, approvals, controls) from " +
          "index after; next is the after of the next page (null at the end).",
        outputSchema: TRANSCRIPT_PAGE,
        readOnly: true,
        destructive: false,
      },
      "/workflows/transcript",
      transcriptBody,
      { limit: TOOL_PAGE_DEFAULT },
    ),
    inputSchema: input(transcriptBody, { limit: PAGE }),
  },
  routeTool(
    {
      name: "intervene",
      title: "Steer a live agent attempt",
      description:
        "Sends one intervention to one live agent attempt (ids from attempts_list): Cancel, " +
        "InjectMessage, PauseResume, UpdateBudget or RespondToApproval. The outcome is Applied, " +
        "CapabilityNotSupported or StaleTarget (not live, or its worker is gone).",
      outputSchema: OUTCOME,
      readOnly: false,
      destructive: false,
    },
    "/workflows/intervene",
    interveneBody,
  ),
];
