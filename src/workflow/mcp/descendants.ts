/**
 * `workflow_cancel`: the run's descendants are read first (its history's ChildStarted
 * events, then theirs; a child's workflow id is its run id), then the run is cancelled, and
 * the answer says which descendants the cascade reaches: those Running or Paused when it was
 * cancelled (a child started in between is cancelled too, but not listed). Every read is
 * the caller's own call of the history and describe routes; the walk is bounded.
 */

import type { RouteAnswer } from "./routes.ts";
import { answer, type ToolArgs, type ToolContext } from "./tool.ts";

/** Descendants listed at most; past it the answer says `descendants_truncated`. */
export const DESCENDANTS_LISTED_MAX = 1_000;

/** Events read per history page of the walk. */
const HISTORY_PAGE = 1_000;

interface Descendant {
  readonly workflow_id: string;
  readonly run_id: string;
  readonly parent_run_id: string;
  readonly definition_name: string;
  readonly status: string;
}

/** The child run ids a run started, from its whole history. */
async function childrenOf(context: ToolContext, namespace: unknown, workflowId: string) {
  const children: string[] = [];
  for (let after: number | null = 0; after !== null; ) {
    const page: RouteAnswer = await context.routes("POST", "/workflows/history", {
      ...(namespace === undefined ? {} : { namespace }),
      workflow_id: workflowId,
      after,
      limit: HISTORY_PAGE,
    });
    for (const event of page.value.events as { type: string; child_run_id?: string }[]) {
      if (event.type === "ChildStarted" && event.child_run_id !== undefined) {
        children.push(event.child_run_id);
      }
    }
    after = page.value.next as number | null;
  }
  return children;
}

async function walk(
  context: ToolContext,
  namespace: unknown,
  root: { workflow_id: string; run_id: string },
) {
  const found: Descendant[] = [];
  const queue = [root];
  let truncated = false;
  while (queue.length > 0 && !truncated) {
    const parent = queue.shift()!;
    for (const child of await childrenOf(context, namespace, parent.workflow_id)) {
      if (found.length === DESCENDANTS_LISTED_MAX) {
        truncated = true;
        break;
      }
      const described = await context.routes("POST", "/workflows/describe", {
        ...(namespace === undefined ? {} : { namespace }),
        workflow_id: child,
      });
      const run = described.value.run;
      found.push({
        workflow_id: run.workflow_id,
        run_id: run.run_id,
        parent_run_id: parent.run_id,
        definition_name: run.definition_name,
        status: run.status,
      });
      queue.push({ workflow_id: run.workflow_id, run_id: run.run_id });
    }
  }
  return { found, truncated };
}

export async function cancelWithDescendants(
  context: ToolContext,
  args: ToolArgs,
): Promise<RouteAnswer> {
  // The target as the cancel route will see it: an absent or foreign run is refused there
  // first, with the route's own code.
  const target = await context.routes("POST", "/workflows/describe", args);
  const { workflow_id, run_id } = target.value.run as { workflow_id: string; run_id: string };
  const tree = await walk(context, args.namespace, { workflow_id, run_id });
  const done = await context.routes("POST", "/workflows/cancel", args);
  const applied = done.value.applied === true;
  return answer({
    ...done.value,
    descendants: tree.found.map((d) => ({
      ...d,
      reached: applied && (d.status === "Running" || d.status === "Paused"),
    })),
    descendants_truncated: tree.truncated,
  });
}
