/**
 * One node per schema, enforced. Until nodes divide the shards between them, two
 * `skein serve` processes on one PostgreSQL schema would each recover and dispatch every
 * run: the same work twice. So the first node holds a session-level advisory lock on its
 * own connection for as long as it runs, and a second node is refused at start-up
 * (`storage_unavailable`), as SQLite's exclusive lock refuses a second opener.
 *
 * The lock lives as long as its session, so the node must stop the moment it cannot vouch
 * for that session: a connection error, an end, or a ping (every `pingMs`) that fails or
 * takes longer than `pingMs` reports the lease lost, and the server stops (a restart
 * recovers from history). Otherwise PostgreSQL could end the session, hand the lock to
 * another node, and both would run.
 *
 * States:  acquiring --lock granted--> held --error | end | failed ping--> lost
 *          acquiring --lock taken----> refused (open throws)
 *          held --release()--> released
 */

import pg from "pg";
import { workflowError } from "../../errors.ts";

export interface NodeLeaseOptions {
  readonly url: string;
  readonly schema: string;
  /** For messages: the URL without its password, and the schema. */
  readonly where: string;
  /** How often the session is checked, and how long a check may take. */
  readonly pingMs?: number;
  /** Called once if the lease is lost while held (not after `release`). */
  readonly onLost: (error: Error) => void;
}

export const LEASE_PING_MS = 5_000;
export const LEASE_APPLICATION_NAME = "skein-node-lease";

export class NodeLease {
  /** The database session holding the lock (`pg_stat_activity.pid`), for logs. */
  readonly sessionPid: number;
  readonly #client: pg.Client;
  readonly #timer: NodeJS.Timeout;
  #done = false;

  private constructor(
    client: pg.Client,
    sessionPid: number,
    pingMs: number,
    onLost: (error: Error) => void,
  ) {
    this.#client = client;
    this.sessionPid = sessionPid;
    const lose = (reason: string) => {
      if (this.#done) return;
      this.#done = true;
      clearInterval(this.#timer);
      void client.end().catch(() => {});
      onLost(workflowError("storage_unavailable", `the node lease was lost: ${reason}`));
    };
    client.on("error", (error) => lose(error.message));
    client.on("end", () => lose("the connection ended"));
    this.#timer = setInterval(() => {
      client.query("SELECT 1").catch((error: Error) => lose(error.message));
    }, pingMs);
    this.#timer.unref();
  }

  /** Takes the schema's node lock, or refuses: another node holds it. */
  static async acquire(options: NodeLeaseOptions): Promise<NodeLease> {
    const pingMs = options.pingMs ?? LEASE_PING_MS;
    const client = new pg.Client({
      connectionString: options.url,
      keepAlive: true,
      query_timeout: pingMs,
      // Operators find the session (and its lock) by this name in pg_stat_activity.
      application_name: LEASE_APPLICATION_NAME,
    });
    let pid: number;
    try {
      await client.connect();
      const r = await client.query<{ held: boolean; pid: number }>(
        "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS held, pg_backend_pid() AS pid",
        [`skein.node.${options.schema}`],
      );
      pid = r.rows[0]!.pid;
      if (r.rows[0]?.held !== true) {
        throw workflowError(
          "storage_unavailable",
          `${options.where} is in use by another skein serve (one node per schema)`,
        );
      }
    } catch (error) {
      await client.end().catch(() => {});
      if (error instanceof Error && (error as { code?: string }).code === "storage_unavailable") {
        throw error;
      }
      const reason = error instanceof Error ? error.message : String(error);
      throw workflowError(
        "storage_unavailable",
        `cannot take the node lock on ${options.where}: ${reason}`,
        error,
      );
    }
    return new NodeLease(client, pid, pingMs, options.onLost);
  }

  /** Gives the lock back (ending the session); no loss is reported after this. */
  async release(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    clearInterval(this.#timer);
    await this.#client.end().catch(() => {});
  }
}
