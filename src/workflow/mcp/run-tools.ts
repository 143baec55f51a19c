/**
 * One tool per definition of the endpoint's namespace: `run_<name>`, whose input schema is
 * the definition's declared `input_schema` (an open object schema when it declares none) and
 * whose arguments are the run's input. A call starts the latest version through the start
 * route (which enforces the schema with `invalid_input`) and waits up to RUN_TOOL_WAIT_MS for
 * the run's end, so an agent calls a workflow like a function. Definitions are read through
 * the definitions route as the caller: a namespace the bearer is not granted lists no tools
 * (invisible, not listed and then refused).
 */

import { isCodedError } from "../../common/errors.ts";
import { query } from "./routes.ts";
import { STARTED } from "./schemas.ts";
import { answer, type Tool, type ToolContext, withProgress } from "./tool.ts";

export const RUN_TOOL_PREFIX = "run_";
/** MCP's bound on a tool name; a longer definition name is reached with workflow_start. */
export const TOOL_NAME_MAX = 128;
/** Definitions offered as tools at most (by name order); the rest through workflow_start. */
export const RUN_TOOLS_MAX = 200;
/** How long a `run_<name>` call waits for the run's end before answering it Running. */
export const RUN_TOOL_WAIT_MS = 30_000;

/** Refusals that mean "this namespace lists nothing for you", not a failure of the list. */
const INVISIBLE = new Set(["forbidden", "namespace_not_found", "namespace_required"]);

interface Listed {
  readonly name: string;
  readonly version: string;
  readonly input_schema: Record<string, unknown> | null;
}

const OPEN_INPUT = {
  type: "object",
  description: "the run's input (this definition declares no input_schema)",
};

export function runTool(definition: Listed, namespace: string): Tool {
  return {
    name: `${RUN_TOOL_PREFIX}${definition.name}`,
    title: `Run ${definition.name}`,
    description:
      `Runs workflow ${definition.name} (namespace ${JSON.stringify(namespace)}, latest ` +
      `version ${definition.version}) with the arguments as its input, and waits up to ` +
      `${RUN_TOOL_WAIT_MS / 1000} s for its end: run.output is its output. A run still going ` +
      "comes back Running; follow it with workflow_describe and wait_ms.",
    inputSchema: definition.input_schema ?? OPEN_INPUT,
    outputSchema: STARTED,
    readOnly: false,
    destructive: false,
    call: (args, context) => startAndWait(context, definition.name, args),
  };
}

async function startAndWait(context: ToolContext, name: string, input: unknown) {
  const started = await context.routes("POST", "/workflows/start", {
    ...(context.scope === undefined ? {} : { namespace: context.scope }),
    name,
    input,
  });
  const { namespace, workflow_id } = started.value as { namespace: string; workflow_id: string };
  const described = await withProgress(
    context,
    RUN_TOOL_WAIT_MS,
    "waiting for the run to end",
    context.routes("POST", "/workflows/describe", {
      namespace,
      workflow_id,
      wait_ms: RUN_TOOL_WAIT_MS,
    }),
  );
  return answer({ ...started.value, run: described.value.run });
}

/** The run tools of the endpoint's namespace, as the caller may see them. */
export async function runTools(context: ToolContext): Promise<Tool[]> {
  let listed: { namespace: string; definitions: Listed[] };
  try {
    const page = await context.routes(
      "GET",
      `/workflows/definitions${query({ namespace: context.scope })}`,
    );
    listed = page.value;
  } catch (error) {
    if (isCodedError(error) && INVISIBLE.has(error.code)) return [];
    throw error;
  }
  return listed.definitions
    .filter((d) => RUN_TOOL_PREFIX.length + d.name.length <= TOOL_NAME_MAX)
    .slice(0, RUN_TOOLS_MAX)
    .map((d) => runTool(d, listed.namespace));
}

/** A `run_<name>` tool called without listing first: the definition is named by the tool. */
export function runToolNamed(name: string): Tool | undefined {
  if (!name.startsWith(RUN_TOOL_PREFIX) || name.length === RUN_TOOL_PREFIX.length) return undefined;
  return runTool(
    { name: name.slice(RUN_TOOL_PREFIX.length), version: "latest", input_schema: null },
    "",
  );
}
