/**
 * Agent transcript rows on SQLite: one row per entry, appended in arrival order (each append
 * is one synced statement), read back per attempt in that order.
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { AttemptRef } from "../../../protocol/attempt.ts";
import type { TranscriptStore } from "../store.ts";

export class SqliteTranscriptStore implements TranscriptStore {
  readonly #insert: StatementSync;
  readonly #list: StatementSync;

  constructor(db: DatabaseSync) {
    this.#insert = db.prepare(
      "INSERT INTO agent_transcripts (run_id, activity_id, attempt, entry, at) VALUES (?, ?, ?, ?, ?)",
    );
    this.#list = db.prepare(
      "SELECT entry FROM agent_transcripts WHERE run_id = ? AND activity_id = ? AND attempt = ? ORDER BY seq",
    );
  }

  async append(ref: AttemptRef, entry: string, at: number): Promise<void> {
    this.#insert.run(ref.run_id, ref.activity_id, ref.attempt, entry, at);
  }

  async list(ref: AttemptRef): Promise<string[]> {
    return (this.#list.all(ref.run_id, ref.activity_id, ref.attempt) as { entry: string }[]).map(
      (r) => r.entry,
    );
  }
}
