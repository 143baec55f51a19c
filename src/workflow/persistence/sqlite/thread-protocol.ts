/**
 * The messages between the server's main thread and the thread that owns the SQLite
 * connection (`thread.ts`). A call names an area of the `WorkflowStore` (`namespaces`,
 * `runs`, …), a method and its arguments; the answer carries the same id and either the
 * method's result or the error it threw, as `{code, message}` so a coded refusal crosses the
 * thread boundary with its code (STYLE.md 10). Values are copied by structured clone: every
 * store method takes and returns plain records.
 *
 * Requests travel in arrays (the calls made during one turn of the main thread's loop, in
 * the order made), and so do the answers to calls (those one turn of the thread produced):
 * each message wakes the other thread, and a wake-up costs more than a small call.
 */

import type { CommitMessage } from "./commit-message.ts";

/** The areas of the store the thread serves, and where each lives on `SqliteWorkflowStore`. */
export const AREAS = ["namespaces", "deployments", "transcripts", "definitions", "runs"] as const;
export type Area = (typeof AREAS)[number];

export type Request =
  | {
      readonly type: "call";
      readonly id: number;
      readonly area: Area;
      readonly method: string;
      readonly args: unknown[];
    }
  /** An engine commit, its batch packed (commit-message.ts). */
  | { readonly type: "commit"; readonly id: number; readonly batch: CommitMessage }
  | { readonly type: "close"; readonly id: number }
  /** An online backup: started from the call queue, then taking turns with it (thread.ts). */
  | { readonly type: "backup"; readonly id: number; readonly target: string };

export interface ThreadError {
  readonly code: string | undefined;
  readonly message: string;
}

export type Answer =
  | { readonly type: "ready"; readonly schemaVersion: number }
  | { readonly type: "failed"; readonly error: ThreadError }
  | { readonly type: "result"; readonly id: number; readonly value: unknown }
  | { readonly type: "error"; readonly id: number; readonly error: ThreadError };

/** What the opening thread is given. */
export interface ThreadData {
  readonly file: string;
}

export function threadError(error: unknown): ThreadError {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { code: typeof code === "string" ? code : undefined, message: error.message };
  }
  return { code: undefined, message: String(error) };
}
