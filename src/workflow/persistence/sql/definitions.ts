/**
 * Workflow definitions over either backend: one row per (namespace, version), the version
 * being the content hash of the canonical document, so registering the same document twice
 * stores it once. Every registration takes the namespace's next `seq` (a repeat keeps its row
 * and takes the new `seq`), and "latest of a name" is its highest `seq`. Registrations in one
 * namespace take their `seq` one at a time: the transaction first takes the namespace's key
 * lock (`Dialect.keyLock`; SQLite's writers are serialised already).
 */

import type {
  DefinitionRecord,
  DefinitionStore,
  DefinitionSummary,
  NewDefinition,
} from "../workflows.ts";
import type { SqlDatabase } from "./database.ts";
import { all, get, run } from "./unit.ts";

interface DefinitionRow {
  namespace: string;
  name: string;
  version: string;
  canonical: string;
  registered_at: number | string;
  registered_by: string;
}

interface DefinitionSummaryRow {
  name: string;
  version: string;
  registered_at: number | string;
  registered_by: string;
  versions: number | string;
}

const COLUMNS = "namespace, name, version, canonical, registered_at, registered_by";
const NEXT_SEQ =
  "SELECT coalesce(max(seq), 0) + 1 AS seq FROM workflow_definitions WHERE namespace = ?";
/** Parameters: namespace, name, version, canonical, registered_at, registered_by, seq. */
const INSERT =
  `INSERT INTO workflow_definitions (${COLUMNS}, seq) VALUES (?, ?, ?, ?, ?, ?, ?) ` +
  "ON CONFLICT (namespace, version) DO NOTHING";
const TOUCH = "UPDATE workflow_definitions SET seq = ? WHERE namespace = ? AND version = ?";
const GET = `SELECT ${COLUMNS} FROM workflow_definitions WHERE namespace = ? AND version = ?`;
/** Every version of a name, the latest registered (highest `seq`) first. */
const VERSIONS = `SELECT ${COLUMNS} FROM workflow_definitions WHERE namespace = ? AND name = ? ORDER BY seq DESC`;
const LATEST = `${VERSIONS} LIMIT 1`;
/** Each name's latest version (highest `seq`) with its version count; binds the namespace twice. */
const LIST =
  "SELECT d.name, d.version, d.registered_at, d.registered_by, c.versions " +
  "FROM workflow_definitions d JOIN (SELECT name, max(seq) AS seq, count(*) AS versions " +
  "FROM workflow_definitions WHERE namespace = ? GROUP BY name) c " +
  "ON d.name = c.name AND d.seq = c.seq WHERE d.namespace = ? ORDER BY d.name";

function toRecord(row: DefinitionRow): DefinitionRecord {
  return {
    namespace: row.namespace,
    name: row.name,
    version: row.version,
    canonical: row.canonical,
    registeredAt: Number(row.registered_at),
    registeredBy: row.registered_by,
  };
}

function toSummary(row: DefinitionSummaryRow): DefinitionSummary {
  return {
    name: row.name,
    version: row.version,
    registeredAt: Number(row.registered_at),
    registeredBy: row.registered_by,
    versions: Number(row.versions),
  };
}

export class SqlDefinitionStore implements DefinitionStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  register(input: NewDefinition): Promise<{ record: DefinitionRecord; created: boolean }> {
    const { keyLock } = this.#db.dialect;
    return this.#db.transaction(function* () {
      const { namespace, name, version, canonical, registeredAt, registeredBy } = input;
      if (keyLock !== undefined) yield* get(keyLock, [`skein.definitions.${namespace}`]);
      const { seq } = (yield* get<{ seq: number | string }>(NEXT_SEQ, [namespace]))!;
      const params = [namespace, name, version, canonical, registeredAt, registeredBy, seq];
      const created = (yield* run(INSERT, params)) === 1;
      if (!created) yield* run(TOUCH, [seq, namespace, version]);
      const row = (yield* get<DefinitionRow>(GET, [namespace, version]))!;
      return { record: toRecord(row), created };
    });
  }

  get(namespace: string, version: string): Promise<DefinitionRecord | undefined> {
    return this.#db.autocommit(function* () {
      const row = yield* get<DefinitionRow>(GET, [namespace, version]);
      return row === undefined ? undefined : toRecord(row);
    });
  }

  latest(namespace: string, name: string): Promise<DefinitionRecord | undefined> {
    return this.#db.autocommit(function* () {
      const row = yield* get<DefinitionRow>(LATEST, [namespace, name]);
      return row === undefined ? undefined : toRecord(row);
    });
  }

  list(namespace: string): Promise<DefinitionSummary[]> {
    return this.#db.autocommit(function* () {
      return (yield* all<DefinitionSummaryRow>(LIST, [namespace, namespace])).map(toSummary);
    });
  }

  versions(namespace: string, name: string): Promise<DefinitionRecord[]> {
    return this.#db.autocommit(function* () {
      return (yield* all<DefinitionRow>(VERSIONS, [namespace, name])).map(toRecord);
    });
  }
}
