/**
 * Agent transcript rows on PostgreSQL, the same shape as on SQLite: one row per entry with a
 * BIGSERIAL sequence for arrival order; each append is one statement.
 */

import type { Pool } from "pg";
import type { AttemptRef } from "../../../protocol/attempt.ts";
import type { TranscriptStore } from "../store.ts";

export class PostgresTranscriptStore implements TranscriptStore {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async append(ref: AttemptRef, entry: string, at: number): Promise<void> {
    await this.#pool.query(
      "INSERT INTO agent_transcripts (run_id, activity_id, attempt, entry, at) VALUES ($1, $2, $3, $4, $5)",
      [ref.run_id, ref.activity_id, ref.attempt, entry, at],
    );
  }

  async list(ref: AttemptRef): Promise<string[]> {
    const { rows } = await this.#pool.query<{ entry: string }>(
      "SELECT entry FROM agent_transcripts WHERE run_id = $1 AND activity_id = $2 AND attempt = $3 ORDER BY seq",
      [ref.run_id, ref.activity_id, ref.attempt],
    );
    return rows.map((r) => r.entry);
  }
}
