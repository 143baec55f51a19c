/**
 * The `workflow_definitions` row both backends share, how it becomes a DefinitionRecord, and
 * the statements both run (in either dialect's placeholders). PostgreSQL returns BIGINT
 * times as strings, SQLite as numbers; both are accepted.
 */

import type { DefinitionRecord, DefinitionSummary, NewDefinition } from "./workflows.ts";

export interface DefinitionRow {
  namespace: string;
  name: string;
  version: string;
  canonical: string;
  registered_at: number | string;
  registered_by: string;
}

const DEFINITION_COLUMNS = "namespace, name, version, canonical, registered_at, registered_by";

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

/**
 * The definition store's statements with one dialect's placeholders (`p(n)` names parameter
 * n: `?` on SQLite, `$n` on PostgreSQL), so both backends share one model: a registration
 * takes the namespace's next `seq` (a repeat keeps its row and takes the new `seq`), and
 * "latest of a name" is its highest `seq`.
 */
export function definitionSql(p: (n: number) => string) {
  const byVersion = `namespace = ${p(1)} AND version = ${p(2)}`;
  return {
    nextSeq: `SELECT coalesce(max(seq), 0) + 1 AS seq FROM workflow_definitions WHERE namespace = ${p(1)}`,
    /** Parameters: insertParams(…). */
    insert:
      `INSERT INTO workflow_definitions (${DEFINITION_COLUMNS}, seq) ` +
      `VALUES (${[1, 2, 3, 4, 5, 6, 7].map(p).join(", ")}) ON CONFLICT (namespace, version) DO NOTHING`,
    /** Parameters: seq, namespace, version. */
    touch: `UPDATE workflow_definitions SET seq = ${p(1)} WHERE namespace = ${p(2)} AND version = ${p(3)}`,
    get: `SELECT ${DEFINITION_COLUMNS} FROM workflow_definitions WHERE ${byVersion}`,
    latest:
      `SELECT ${DEFINITION_COLUMNS} FROM workflow_definitions WHERE namespace = ${p(1)} ` +
      `AND name = ${p(2)} ORDER BY seq DESC LIMIT 1`,
    /** Every version of a name, the latest registered (highest `seq`) first. */
    versions:
      `SELECT ${DEFINITION_COLUMNS} FROM workflow_definitions WHERE namespace = ${p(1)} ` +
      `AND name = ${p(2)} ORDER BY seq DESC`,
    /**
     * Each name's latest version (highest `seq`) with its version count, in one namespace.
     * The namespace appears twice: SQLite binds it twice, PostgreSQL's `$1` names it twice.
     */
    list:
      "SELECT d.name, d.version, d.registered_at, d.registered_by, c.versions " +
      "FROM workflow_definitions d JOIN (SELECT name, max(seq) AS seq, count(*) AS versions " +
      `FROM workflow_definitions WHERE namespace = ${p(1)} GROUP BY name) c ` +
      `ON d.name = c.name AND d.seq = c.seq WHERE d.namespace = ${p(1)} ORDER BY d.name`,
  } as const;
}

/** The parameters of `definitionSql(…).insert`, in its column order. */
export function insertParams(input: NewDefinition, seq: number | string): (number | string)[] {
  const { namespace, name, version, canonical, registeredAt, registeredBy } = input;
  return [namespace, name, version, canonical, registeredAt, registeredBy, seq];
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
