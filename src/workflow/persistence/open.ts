/**
 * Chooses and opens the storage backend named by the configuration (`storage.url`):
 * SQLite for a single node (its connection on a thread of its own, see
 * `sqlite/threaded-store.ts`), PostgreSQL for a cluster. Both are migrated before they return.
 * On PostgreSQL the node first takes the schema's node lease (`postgres/node-lease.ts`):
 * until nodes divide the shards, a second node on the same schema is refused.
 */

import type { StorageTarget } from "../config/load.ts";
import { NodeLease } from "./postgres/node-lease.ts";
import { PostgresWorkflowStore, redactUrl } from "./postgres/store.ts";
import { ThreadedSqliteStore } from "./sqlite/threaded-store.ts";
import type { WorkflowStore } from "./store.ts";

export interface OpenOptions {
  /** Called if the node lease (PostgreSQL) is lost while the server runs: it must stop. */
  readonly onLost?: (error: Error) => void;
}

export async function openStore(
  target: StorageTarget,
  options: OpenOptions = {},
): Promise<WorkflowStore> {
  if (target.kind === "sqlite") return ThreadedSqliteStore.open(target.path);
  const lease = await NodeLease.acquire({
    url: target.url,
    schema: target.schema,
    where: describeStorage(target),
    onLost: options.onLost ?? (() => {}),
  });
  try {
    return holding(await PostgresWorkflowStore.open(target.url, target.schema), lease);
  } catch (error) {
    await lease.release();
    throw error;
  }
}

/** The store, giving its lease back once it is closed. */
function holding(store: WorkflowStore, lease: NodeLease): WorkflowStore {
  return {
    backend: store.backend,
    schemaVersion: store.schemaVersion,
    namespaces: store.namespaces,
    deployments: store.deployments,
    transcripts: store.transcripts,
    workflows: store.workflows,
    close: async () => {
      try {
        await store.close();
      } finally {
        await lease.release();
      }
    },
  };
}

/** Where the store is, for the start-up banner (no passwords). */
export function describeStorage(target: StorageTarget): string {
  return target.kind === "sqlite"
    ? target.path
    : `${redactUrl(target.url)} (schema ${target.schema})`;
}
