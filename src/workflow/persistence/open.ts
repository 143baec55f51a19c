/**
 * Chooses and opens the storage backend named by the configuration (`storage.url`):
 * SQLite for a single node (its connection on a thread of its own, see
 * `sqlite/threaded-store.ts`), PostgreSQL for a cluster of one or more nodes (membership and
 * shard leases are the cluster's business: src/workflow/cluster/). Both are migrated before
 * they return.
 */

import type { StorageTarget } from "../config/load.ts";
import { PostgresWorkflowStore, redactUrl } from "./postgres/store.ts";
import { ThreadedSqliteStore } from "./sqlite/threaded-store.ts";
import type { WorkflowStore } from "./store.ts";

export async function openStore(target: StorageTarget): Promise<WorkflowStore> {
  if (target.kind === "sqlite") return ThreadedSqliteStore.open(target.path);
  return PostgresWorkflowStore.open(target.url, target.schema, target.poolSize);
}

/** Where the store is, for the start-up banner (no passwords). */
export function describeStorage(target: StorageTarget): string {
  return target.kind === "sqlite"
    ? target.path
    : `${redactUrl(target.url)} (schema ${target.schema})`;
}
