/**
 * The pending approvals of an agent attempt, read from its transcript (through the
 * transcript route, as the caller): a tool call whose `approval` entry is `pending` and has
 * no later `approved` or `denied`, with the tool and arguments of its `tool_call` entry, so
 * an agent acting as reviewer sees what it is asked to allow.
 */

import type { ToolArgs, ToolContext } from "./tool.ts";

interface Entry {
  readonly type?: unknown;
  readonly call_id?: unknown;
  readonly name?: unknown;
  readonly arguments?: unknown;
  readonly state?: unknown;
}

export interface PendingApproval {
  readonly call_id: unknown;
  readonly tool: unknown;
  readonly arguments: unknown;
}

/** Pending approvals in the order they were asked. */
export function pendingIn(entries: readonly Entry[]): PendingApproval[] {
  const calls = new Map<string, Entry>();
  const pending = new Map<string, PendingApproval>();
  for (const entry of entries) {
    // call_id echoes the model's id (any JSON): its JSON text is the key.
    const key = JSON.stringify(entry.call_id ?? null);
    if (entry.type === "tool_call") calls.set(key, entry);
    if (entry.type !== "approval") continue;
    if (entry.state === "pending") {
      const call = calls.get(key);
      pending.set(key, {
        call_id: entry.call_id,
        tool: call?.name ?? null,
        arguments: call?.arguments ?? null,
      });
    } else {
      pending.delete(key);
    }
  }
  return [...pending.values()];
}

export async function pendingApprovals(
  context: ToolContext,
  attempt: ToolArgs,
): Promise<PendingApproval[]> {
  const { namespace, workflow_id, run_id, activity_id, attempt: n } = attempt;
  const transcript = await context.routes("POST", "/workflows/transcript", {
    ...(namespace === undefined ? {} : { namespace }),
    workflow_id,
    run_id,
    activity_id,
    attempt: n,
  });
  return pendingIn(transcript.value.entries as Entry[]);
}
