/**
 * Chooses and opens the storage backend named by the configuration (`storage.url`). This
 * build stores on SQLite; the configuration refuses other URLs before this point.
 */

import type { ServerConfig } from "../config/load.ts";
import { SqliteWorkflowStore } from "./sqlite/store.ts";
import type { WorkflowStore } from "./store.ts";

export function openStore(config: ServerConfig): WorkflowStore {
  return SqliteWorkflowStore.open(config.storage.path);
}
