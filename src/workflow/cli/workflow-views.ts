/**
 * How `skein workflow` prints runs, histories and definitions for a person: a run as
 * `key: value` lines followed by its pending activities (with a hint when no worker serves
 * one: the usual reason a run is stuck), lists as tables. JSON output prints the server's
 * values instead (see workflow.ts).
 */

import { cell, fields, table } from "./output.ts";

export interface RunJson {
  namespace: string;
  workflow_id: string;
  run_id: string;
  definition_version: string;
  status: string;
  started_at: string;
  ended_at: string | null;
  output: unknown;
  failure: unknown;
}

export interface PendingJson {
  activity_id: number;
  step_id: string;
  action: string;
  task_queue: string;
  attempt: number;
  state: string;
  next_retry_at: string | null;
  last_failure: { code: string; message: string } | null;
  workers_serving: number;
}

export interface WorkspaceJson {
  activity_id: number;
  attempt: number;
  server: string;
  collection: string;
  branch: string;
  base: string;
  review_url: string | null;
}

export function runText(run: RunJson): string {
  return fields([
    ["workflow id", run.workflow_id],
    ["run id", run.run_id],
    ["namespace", run.namespace],
    ["status", run.status],
    ["definition", run.definition_version],
    ["started", run.started_at],
    ["ended", run.ended_at],
    ["output", run.output],
    ["failure", run.failure],
  ]);
}

export function describeText(
  run: RunJson,
  pending: readonly PendingJson[],
  total: number,
  workspaces: readonly WorkspaceJson[] = [],
) {
  const spaces = workspacesText(workspaces);
  if (run.status !== "Running" && run.status !== "Paused") return runText(run) + spaces;
  const lines = [runText(run) + spaces, "", `pending activities: ${total}`];
  lines.push(
    table(
      [
        "ID",
        "STEP",
        "ACTION",
        "QUEUE",
        "ATTEMPT",
        "STATE",
        "NEXT RETRY",
        "WORKERS",
        "LAST FAILURE",
      ],
      pending.map((p) => [
        String(p.activity_id),
        p.step_id,
        p.action,
        p.task_queue,
        String(p.attempt),
        p.state,
        cell(p.next_retry_at),
        String(p.workers_serving),
        p.last_failure === null ? "-" : `${p.last_failure.code}: ${p.last_failure.message}`,
      ]),
    ),
  );
  const unserved = new Map<string, string>();
  for (const p of pending) {
    if (Number(p.workers_serving) === 0) unserved.set(`${p.task_queue}\0${p.action}`, p.task_queue);
  }
  for (const [key, queue] of unserved) {
    const action = key.split("\0")[1];
    lines.push(
      `hint: no connected worker serves action ${action} on task queue ${queue}; start one ` +
        `(\`skein worker module WORKER.yaml --namespace ${run.namespace}\`) and see ` +
        `\`skein task-queue describe ${queue} --namespace ${run.namespace}\``,
    );
  }
  return lines.join("\n");
}

/** Where the run's agents work in a store (describe's `workspaces`), and where to review it. */
function workspacesText(workspaces: readonly WorkspaceJson[]): string {
  if (workspaces.length === 0) return "";
  const rows = table(
    ["ID", "ATTEMPT", "SERVER", "COLLECTION", "BRANCH", "BASE", "REVIEW"],
    workspaces.map((w) => [
      String(w.activity_id),
      String(w.attempt),
      w.server,
      w.collection,
      w.branch,
      w.base,
      cell(w.review_url),
    ]),
  );
  return `\n\nworkspaces: ${workspaces.length}\n${rows}`;
}

export function runsTable(runs: readonly RunJson[]): string {
  return table(
    ["WORKFLOW ID", "STATUS", "STARTED", "ENDED"],
    runs.map((r) => [r.workflow_id, r.status, r.started_at, cell(r.ended_at)]),
  );
}

export function historyTable(events: readonly Record<string, unknown>[]): string {
  return table(
    ["AT", "TYPE", "DETAILS"],
    events.map(({ at, type, ...rest }) => [
      typeof at === "number" ? new Date(at).toISOString() : cell(at),
      cell(type),
      cell(rest),
    ]),
  );
}

export interface DefinitionJson {
  name: string;
  version: string;
  registered_at: string;
  registered_by: string;
  versions: number;
}

export function definitionsTable(definitions: readonly DefinitionJson[]): string {
  return table(
    ["NAME", "LATEST VERSION", "VERSIONS", "REGISTERED", "BY"],
    definitions.map((d) => [
      d.name,
      d.version,
      String(d.versions),
      d.registered_at,
      d.registered_by,
    ]),
  );
}
