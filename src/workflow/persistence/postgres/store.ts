/**
 * The PostgreSQL backend of the workflow store, for cluster mode: a connection pool whose
 * every connection works in one schema (`storage.schema`), migrated when opened. Commits
 * are synchronous (the server default), so a resolved write is durable. Several nodes share
 * one schema as a cluster (`cluster`: leases, shard-scoped fenced run stores; docs/cluster.md).
 */

import pg from "pg";
import { workflowError } from "../../errors.ts";
import type { ClusterStorage, WorkflowStore } from "../store.ts";
import { postgresCluster } from "./cluster-storage.ts";
import { PostgresDefinitionStore } from "./definitions.ts";
import { PostgresDeploymentStore } from "./deployments.ts";
import { migrate } from "./migrations.ts";
import { PostgresNamespaceStore } from "./namespaces.ts";
import { PostgresRunStore } from "./runs.ts";
import { PostgresTranscriptStore } from "./transcripts.ts";

/** Connections per node; the engine's claim loops and the API share them. */
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

export class PostgresWorkflowStore implements WorkflowStore {
  readonly backend = "postgres";
  readonly schemaVersion: number;
  readonly namespaces: PostgresNamespaceStore;
  readonly deployments: PostgresDeploymentStore;
  readonly transcripts: PostgresTranscriptStore;
  readonly workflows: { definitions: PostgresDefinitionStore; runs: PostgresRunStore };
  readonly cluster: ClusterStorage & { close(): Promise<void> };
  readonly #pool: pg.Pool;

  private constructor(pool: pg.Pool, schemaVersion: number, url: string, schema: string) {
    this.#pool = pool;
    this.cluster = postgresCluster(url, schema, pool);
    this.schemaVersion = schemaVersion;
    this.namespaces = new PostgresNamespaceStore(pool);
    this.deployments = new PostgresDeploymentStore(pool);
    this.transcripts = new PostgresTranscriptStore(pool);
    this.workflows = {
      definitions: new PostgresDefinitionStore(pool),
      runs: new PostgresRunStore(pool),
    };
  }

  static async open(url: string, schema: string): Promise<PostgresWorkflowStore> {
    if (!SCHEMA_NAME.test(schema)) {
      throw workflowError(
        "storage_unavailable",
        `storage.schema ${JSON.stringify(schema)} is not a plain identifier`,
      );
    }
    const pool = new pg.Pool({
      connectionString: url,
      max: POOL_SIZE,
      options: `-c search_path=${schema}`,
    });
    // An idle connection that breaks must not crash the node; the next query reconnects.
    pool.on("error", () => {});
    const where = `${redactUrl(url)} (schema ${schema})`;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      await pool.end();
      const reason = error instanceof Error ? error.message : String(error);
      throw workflowError("storage_unavailable", `cannot connect to ${where}: ${reason}`, error);
    }
    let version: number;
    try {
      version = await migrate(client, schema, where);
    } catch (error) {
      client.release();
      await pool.end();
      throw error;
    }
    client.release();
    return new PostgresWorkflowStore(pool, version, url, schema);
  }

  async close(): Promise<void> {
    await this.cluster.close();
    if (!this.#pool.ending) await this.#pool.end();
  }
}
