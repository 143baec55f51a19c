/**
 * Runs as MCP resources: `skein://runs/{namespace}/{workflow_id}` is the run as
 * `workflow_describe` shows it, and `…/history` (with `?after=N`) a page of its events, so a
 * client can attach a run to a conversation. Reads go through the describe and history
 * routes as the caller; a run the caller may not see (another namespace) is "not found",
 * exactly like one that does not exist. The list offers the endpoint namespace's newest runs.
 */

import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { isCodedError } from "../../common/errors.ts";
import type { ToolContext } from "./tool.ts";

export const RUN_URI_PREFIX = "skein://runs/";
/** Runs offered by resources/list (the newest of the endpoint's namespace). */
export const RESOURCES_LISTED = 50;
/** Events one history resource holds; `?after=` reads on. */
export const HISTORY_RESOURCE_PAGE = 1_000;
/** MCP's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;
const JSON_TYPE = "application/json";

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: `${RUN_URI_PREFIX}{namespace}/{workflow_id}`,
    name: "run",
    title: "A workflow run",
    description:
      "The run as workflow_describe shows it: status, output or failure, pending activities.",
    mimeType: JSON_TYPE,
  },
  {
    uriTemplate: `${RUN_URI_PREFIX}{namespace}/{workflow_id}/history{?after}`,
    name: "run-history",
    title: "A workflow run's history",
    description: `A page of the run's durable events (${HISTORY_RESOURCE_PAGE} at most) from index after.`,
    mimeType: JSON_TYPE,
  },
];

export function runUri(namespace: string, workflowId: string): string {
  return `${RUN_URI_PREFIX}${encodeURIComponent(namespace)}/${workflowId}`;
}

const URI = /^skein:\/\/runs\/([^/?#]+)\/([0-9a-fA-F-]{36})(\/history(?:\?after=(\d{1,10}))?)?$/;

function parseUri(uri: string) {
  const m = URI.exec(uri);
  if (m === null) return undefined;
  try {
    return {
      namespace: decodeURIComponent(m[1]!),
      workflow_id: m[2]!,
      history: m[3] !== undefined,
      after: Number(m[4] ?? 0),
    };
  } catch {
    return undefined;
  }
}

export async function listResources(context: ToolContext) {
  try {
    const page = await context.routes("POST", "/workflows/list", {
      ...(context.scope === undefined ? {} : { namespace: context.scope }),
      order: "newest",
      limit: RESOURCES_LISTED,
    });
    return (
      page.value.runs as {
        namespace: string;
        workflow_id: string;
        definition_name: string;
        status: string;
      }[]
    ).map((run) => ({
      uri: runUri(run.namespace, run.workflow_id),
      name: `${run.definition_name} ${run.workflow_id}`,
      description: `${run.status} run of ${run.definition_name}`,
      mimeType: JSON_TYPE,
    }));
  } catch (error) {
    if (isCodedError(error) && ["forbidden", "namespace_required"].includes(error.code)) return [];
    throw error;
  }
}

export async function readResource(context: ToolContext, uri: string) {
  const target = targetOf(uri);
  const body = { namespace: target.namespace, workflow_id: target.workflow_id };
  const read = await asResource(
    uri,
    target.history
      ? context.routes("POST", "/workflows/history", {
          ...body,
          after: target.after,
          limit: HISTORY_RESOURCE_PAGE,
        })
      : context.routes("POST", "/workflows/describe", body),
  );
  return { contents: [{ uri, mimeType: JSON_TYPE, text: read.text }] };
}

/** The run a resource URI names, read as the caller (so a subscription is authorized). */
export async function runOfResource(
  context: ToolContext,
  uri: string,
): Promise<{ namespace: string; runId: string }> {
  const target = targetOf(uri);
  const described = await asResource(
    uri,
    context.routes("POST", "/workflows/describe", {
      namespace: target.namespace,
      workflow_id: target.workflow_id,
    }),
  );
  return { namespace: target.namespace, runId: described.value.run.run_id as string };
}

function targetOf(uri: string) {
  const target = parseUri(uri);
  if (target === undefined) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `not a run resource URI: ${RUN_URI_PREFIX}{namespace}/{workflow_id}[/history]`,
    );
  }
  return target;
}

async function asResource<T>(uri: string, read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    // Another namespace's run is invisible: not found, like one that does not exist.
    if (
      isCodedError(error) &&
      ["forbidden", "run_not_found", "namespace_not_found"].includes(error.code)
    ) {
      throw new McpError(RESOURCE_NOT_FOUND, `resource not found: ${uri}`, {
        code: "run_not_found",
      });
    }
    throw error;
  }
}
