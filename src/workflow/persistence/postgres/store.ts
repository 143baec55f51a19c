/**
 * The PostgreSQL backend of the workflow store, for cluster mode: a connection pool whose
 * every connection works in one schema (`storage.schema`), migrated when opened. Commits
 * are synchronous (the server default), so a resolved write is durable. The domain areas
 * are the shared modules of `../sql/` over this pool's driver. Several nodes share
 * one schema as a cluster (`cluster`: leases, shard-scoped fenced run stores; docs/cluster.md).
 */

import pg from "pg";
import { workflowError } from "../../errors.ts";
import { SqlDomainStores } from "../sql/domain.ts";
import type { ClusterStorage, WorkflowStore } from "../store.ts";
import { postgresCluster } from "./cluster-storage.ts";
import { PostgresDatabase } from "./driver.ts";
import { migrate } from "./migrations.ts";

/** Connections per node by default (`storage.pool_size`); the engine and the API share them. */
export const POOL_SIZE = 10;

export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The URL with any password replaced, for logs and the start-up banner. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "redacted";
    return parsed.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

export class PostgresWorkflowStore extends SqlDomainStores implements WorkflowStore {
  readonly backend = "postgres";
  readonly schemaVersion: number;
  readonly cluster: ClusterStorage & { close(): Promise<void> };
  readonly #pool: pg.Pool;

  private constructor(pool: pg.Pool, schemaVersion: number, url: string, schema: string) {
    super(new PostgresDatabase(pool));
    this.#pool = pool;
    this.cluster = postgresCluster(url, schema, pool);
    this.schemaVersion = schemaVersion;
  }

  static async open(
    url: string,
    schema: string,
    poolSize = POOL_SIZE,
  ): Promise<PostgresWorkflowStore> {
    if (!SCHEMA_NAME.test(schema)) {
      throw workflowError(
        "storage_unavailable",
        `storage.schema ${JSON.stringify(schema)} is not a plain identifier`,
      );
    }
    const pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      options: `-c search_path=${schema}`,
    });
    // An idle connection that breaks must not crash the node; the next query reconnects.
    pool.on("error", () => {});
    const where = `${redactUrl(url)} (schema ${schema})`;
    try {
      // A first connection of its own, so that an unreachable server is told apart from a
      // migration that fails; the migration then takes it from the pool again.
      (await pool.connect()).release();
    } catch (error) {
      await pool.end();
      const reason = error instanceof Error ? error.message : String(error);
      throw workflowError("storage_unavailable", `cannot connect to ${where}: ${reason}`, error);
    }
    let version: number;
    try {
      version = await migrate(new PostgresDatabase(pool), schema, where);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresWorkflowStore(pool, version, url, schema);
  }

  async close(): Promise<void> {
    await this.cluster.close();
    if (!this.#pool.ending) await this.#pool.end();
  }
}
