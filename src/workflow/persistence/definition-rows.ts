/**
 * The `workflow_definitions` row both backends share and how it becomes a DefinitionRecord.
 * PostgreSQL returns BIGINT times as strings, SQLite as numbers; both are accepted.
 */

import type { DefinitionRecord, DefinitionSummary } from "./workflows.ts";

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

/** Every version of a name, the latest registered (highest `seq`) first. */
export function versionsSql(ns: string, name: string): string {
  return (
    `SELECT ${DEFINITION_COLUMNS} FROM workflow_definitions WHERE namespace = ${ns} ` +
    `AND name = ${name} ORDER BY seq DESC`
  );
}

/**
 * Each name's latest version (highest `seq`) with its version count, in one namespace. The
 * namespace is parameter `ns` (`?` on SQLite, `$1` on PostgreSQL), used twice.
 */
export function listDefinitionsSql(ns: string, ns2: string): string {
  return (
    "SELECT d.name, d.version, d.registered_at, d.registered_by, c.versions " +
    "FROM workflow_definitions d JOIN (SELECT name, max(seq) AS seq, count(*) AS versions " +
    `FROM workflow_definitions WHERE namespace = ${ns} GROUP BY name) c ` +
    `ON d.name = c.name AND d.seq = c.seq WHERE d.namespace = ${ns2} ORDER BY d.name`
  );
}

export interface DefinitionSummaryRow {
  name: string;
  version: string;
  registered_at: number | string;
  registered_by: string;
  versions: number | string;
}

export function toDefinitionSummary(row: DefinitionSummaryRow): DefinitionSummary {
  return {
    name: row.name,
    version: row.version,
    registeredAt: Number(row.registered_at),
    registeredBy: row.registered_by,
    versions: Number(row.versions),
  };
}
