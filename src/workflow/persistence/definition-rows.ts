/**
 * The `workflow_definitions` row both backends share and how it becomes a DefinitionRecord.
 * PostgreSQL returns BIGINT times as strings, SQLite as numbers; both are accepted.
 */

import type { DefinitionRecord } from "./workflows.ts";

export interface DefinitionRow {
  namespace: string;
  name: string;
  version: string;
  canonical: string;
  registered_at: number | string;
  registered_by: string;
}

export const DEFINITION_COLUMNS =
  "namespace, name, version, canonical, registered_at, registered_by";

export function toDefinitionRecord(row: DefinitionRow): DefinitionRecord {
  return {
    namespace: row.namespace,
    name: row.name,
    version: row.version,
    canonical: row.canonical,
    registeredAt: Number(row.registered_at),
    registeredBy: row.registered_by,
  };
}
