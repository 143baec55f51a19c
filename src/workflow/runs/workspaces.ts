/**
 * Where a run's agents work in a store: the `workspace` entries their attempts recorded in
 * their transcripts (an MCP server's pinned branch, docs/agents.md "A branch per run"), one
 * per server, collection and branch, from the latest attempt that recorded it. The history
 * names the attempts; their transcripts (durable, the agent transport's) hold the entries, so
 * the answer is the same on any node and after a restart, with no column of its own. At most
 * `WORKSPACE_ATTEMPTS_READ` attempts are read, newest first: a run with more keeps showing
 * the branches its recent attempts work on.
 */

import type { AttemptRef } from "../../protocol/attempt.ts";
import type { HistoryEvent } from "../engine/history.ts";
import type { TranscribedAttempt } from "../persistence/store.ts";

/** Attempts whose transcripts one describe reads for workspaces (newest first). */
export const WORKSPACE_ATTEMPTS_READ = 64;

export interface Workspace {
  readonly activity_id: number;
  readonly attempt: number;
  readonly server: string;
  readonly url: string;
  readonly collection: string;
  readonly branch: string;
  readonly base: string;
  /** The door's compare view of the branch against its base, when the action names a door. */
  readonly review_url: string | null;
}

interface WorkspaceEntry {
  type: "workspace";
  server: string;
  url: string;
  collection: string;
  branch: string;
  base: string;
  door?: { origin: string; store: string };
}

/** A run's stored transcripts as describe reads them. */
export interface RunTranscripts {
  /** An attempt's entries, decoded. */
  read(ref: AttemptRef): Promise<readonly unknown[]>;
  /** The run's attempts that have a transcript at all. */
  attempts(runId: string): Promise<readonly TranscribedAttempt[]>;
}

/**
 * `transcribed`: the run's attempts that have a transcript (`RunTranscripts.attempts`);
 * the others' transcripts are empty, so they are not read.
 */
export async function runWorkspaces(
  runId: string,
  history: readonly HistoryEvent[],
  transcript: (ref: AttemptRef) => Promise<readonly unknown[]>,
  transcribed: readonly TranscribedAttempt[],
): Promise<Workspace[]> {
  const has = new Set(transcribed.map((t) => `${t.activity_id}/${t.attempt}`));
  const attempts: AttemptRef[] = [];
  let newest = 0;
  for (let i = history.length - 1; i >= 0 && newest < WORKSPACE_ATTEMPTS_READ; i--) {
    const e = history[i]!;
    if (e.type !== "ActivityScheduled") continue;
    newest++;
    if (has.has(`${e.activity_id}/${e.attempt}`)) {
      attempts.push({ run_id: runId, activity_id: e.activity_id, attempt: e.attempt });
    }
  }
  const seen = new Set<string>();
  const found: Workspace[] = [];
  const entries = await Promise.all(attempts.map((ref) => transcript(ref)));
  attempts.forEach((ref, i) => {
    for (const entry of entries[i]!) {
      if (!isWorkspace(entry)) continue;
      const key = JSON.stringify([entry.server, entry.collection, entry.branch]);
      if (seen.has(key)) continue;
      seen.add(key);
      found.push({
        activity_id: ref.activity_id,
        attempt: ref.attempt,
        server: entry.server,
        url: entry.url,
        collection: entry.collection,
        branch: entry.branch,
        base: entry.base,
        review_url: entry.door === undefined ? null : reviewUrl(entry, entry.door),
      });
    }
  });
  // Oldest activity first, as a person reads a run.
  return found.sort((a, b) => a.activity_id - b.activity_id || a.attempt - b.attempt);
}

/**
 * The door's compare view of the branch against its base, where a person reviews and merges
 * it (docs/door.md, "Review"): `/s/STORE/c/COLL/compare/BASE...BRANCH`, every dot of a branch
 * name written %2E so that the one literal `...` separates the two.
 */
export function reviewUrl(
  w: { collection: string; branch: string; base: string },
  door: { origin: string; store: string },
): string {
  const name = (branch: string) => encodeURIComponent(branch).replaceAll(".", "%2E");
  const path = `/s/${encodeURIComponent(door.store)}/c/${encodeURIComponent(w.collection)}`;
  return `${door.origin.replace(/\/$/, "")}${path}/compare/${name(w.base)}...${name(w.branch)}`;
}

/** Entries were decoded by the transport when they arrived; this picks the workspaces. */
function isWorkspace(entry: unknown): entry is WorkspaceEntry {
  return (
    typeof entry === "object" &&
    entry !== null &&
    (entry as { type?: unknown }).type === "workspace"
  );
}
