/**
 * Runs as a tree: a `child` step starts a run of its own (its definition resolved in the
 * parent's namespace, its start recorded in the commit that records ChildStarted in the
 * parent); when a run ends its live children are cancelled, each in its own history, and a
 * waiting parent records ChildEnded in the same commit as the child's end.
 */

import { SkeinError } from "../../common/errors.ts";
import { uuidv7 } from "../../common/uuid.ts";
import { inputRefusal } from "../definitions/input-schema.ts";
import type { WorkflowDefinition } from "../definitions/types.ts";
import { runFailure } from "../errors.ts";
import type { Command } from "./commands.ts";
import type { EngineCore, PendingCommit } from "./core.ts";
import type { EventOf, HistoryEvent } from "./history.ts";
import { enqueueInternal, markDirty } from "./inbox.ts";
import { applyTo, newRun, type Run } from "./run.ts";
import { apply, EMPTY_RUN, isLive, liveChildren } from "./state.ts";

/**
 * A run ended in this tick: its live children are cancelled (each records its own
 * RunCancelled in a later tick, and cascades further from there), and its parent, if it is
 * waiting for it, records ChildEnded in this same commit.
 */
export function ended(core: EngineCore, run: Run, pending: PendingCommit): void {
  run.held = [];
  const end = run.state.ended!;
  const reason = end.type === "RunCancelled" ? end.reason : "requested";
  if (end.type === "RunCancelled") {
    // Controls for every live attempt of the run, including any history no longer counts
    // as in flight (a superseded attempt a worker still runs).
    for (const { ref } of core.dispatcher?.liveAttempts?.(run.id.runId) ?? []) {
      const a = run.state.activities.get(ref.activity_id);
      const inFlight = a?.scheduled.attempt === ref.attempt && a.result === undefined;
      // In-flight attempts get their cancel from the decision (CancelActivity) once.
      if (!inFlight) core.dispatcher?.release(ref, `the run was cancelled (${reason})`);
    }
  }
  for (const childId of liveChildren(run.state)) {
    const child = core.runs.get(childId);
    if (child !== undefined) {
      enqueueInternal(core, child, { type: "RunCancelled", at: core.now(), reason });
    }
  }
  const parentId = run.state.started?.parent_run_id;
  const parent = parentId === undefined ? undefined : core.runs.get(parentId);
  if (parent === undefined || !isLive(parent.state)) return;
  if (!liveChildren(parent.state).includes(run.id.runId)) return;
  const event: EventOf<"ChildEnded"> = {
    type: "ChildEnded",
    at: core.now(),
    child_run_id: run.id.runId,
    status: run.state.status as "Completed" | "Failed" | "Cancelled",
    output_json: end.type === "RunCompleted" ? end.output_json : "null",
    message:
      end.type === "RunFailed"
        ? `${end.code}: ${end.message}`
        : end.type === "RunCancelled"
          ? end.reason
          : "",
  };
  applyTo(parent, event);
  const prior = pending.batch.get(parent.id.runId);
  pending.batch.set(parent.id.runId, {
    ...parent.id,
    events: prior === undefined ? [event] : [...prior.events, event],
    status: parent.state.status,
  });
  markDirty(core, parent);
}
/** The definitions of the children `commands` start, by step; a refusal fails the run. */
export async function resolveChildren(
  core: EngineCore,
  run: Run,
  commands: readonly Command[],
): Promise<Map<string, WorkflowDefinition> | SkeinError> {
  const out = new Map<string, WorkflowDefinition>();
  for (const command of commands) {
    if (command.type !== "StartChild") continue;
    const resolve = core.opts.childDefinition;
    if (resolve === undefined) {
      return runFailure(
        "child_workflows_unavailable",
        `step ${JSON.stringify(command.stepId)}: this engine resolves no child workflows`,
      );
    }
    let definition: WorkflowDefinition;
    try {
      definition = await resolve(run.id.namespace, command.workflow, command.version);
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      return new SkeinError(error.code, `step ${JSON.stringify(command.stepId)}: ${error.message}`);
    }
    // The child's input meets its definition's schema like any start's, or the child never
    // starts and the step fails the parent, recorded in its history (RunFailed).
    const refused = inputRefusal(definition, command.inputJson);
    if (refused !== undefined) {
      return runFailure("invalid_input", `step ${JSON.stringify(command.stepId)}: ${refused}`);
    }
    out.set(command.stepId, definition);
  }
  return out;
}
/** A new child run, its RunStarted applied (recorded with the parent's ChildStarted). */
export function childRun(
  parent: Run,
  command: Extract<Command, { type: "StartChild" }>,
  definition: WorkflowDefinition,
  now: number,
): Run {
  const runId = uuidv7();
  const started: HistoryEvent = {
    type: "RunStarted",
    at: now,
    workflow_id: runId,
    definition_version: definition.version,
    input_json: command.inputJson,
    parent_run_id: parent.id.runId,
  };
  const id = {
    runId,
    workflowId: runId,
    namespace: parent.id.namespace,
    definitionVersion: definition.version,
  };
  return newRun(id, definition, apply(EMPTY_RUN, started));
}
