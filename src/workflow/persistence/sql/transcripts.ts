/**
 * Agent transcript rows over either backend: one row per entry, appended in arrival order
 * (each append one statement; the `seq` key, AUTOINCREMENT or BIGSERIAL, keeps the order),
 * read back per attempt in that order.
 */

import type { AttemptRef } from "../../../protocol/attempt.ts";
import type { TranscribedAttempt, TranscriptStore } from "../store.ts";
import type { SqlDatabase } from "./database.ts";
import { all, run } from "./unit.ts";

const APPEND =
  "INSERT INTO agent_transcripts (run_id, activity_id, attempt, entry, at) VALUES (?, ?, ?, ?, ?)";
const LIST =
  "SELECT entry FROM agent_transcripts WHERE run_id = ? AND activity_id = ? AND attempt = ? ORDER BY seq";
// A prefix of the (run_id, activity_id, attempt, seq) index: an empty range for most runs.
const ATTEMPTS =
  "SELECT DISTINCT activity_id, attempt FROM agent_transcripts WHERE run_id = ? " +
  "ORDER BY activity_id, attempt";

export class SqlTranscriptStore implements TranscriptStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async append(ref: AttemptRef, entry: string, at: number): Promise<void> {
    await this.#db.autocommit(function* () {
      yield* run(APPEND, [ref.run_id, ref.activity_id, ref.attempt, entry, at]);
    });
  }

  list(ref: AttemptRef): Promise<string[]> {
    return this.#db.autocommit(function* () {
      const rows = yield* all<{ entry: string }>(LIST, [ref.run_id, ref.activity_id, ref.attempt]);
      return rows.map((r) => r.entry);
    });
  }

  attempts(runId: string): Promise<TranscribedAttempt[]> {
    return this.#db.autocommit(function* () {
      const rows = yield* all<{ activity_id: number | string; attempt: number | string }>(
        ATTEMPTS,
        [runId],
      );
      // PostgreSQL may return BIGINT columns as strings.
      return rows.map((r) => ({ activity_id: Number(r.activity_id), attempt: Number(r.attempt) }));
    });
  }
}
