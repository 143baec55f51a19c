/**
 * The identity provider's SQLite file (`DIR/idp.db`) and its schema. Unlike the workflow
 * server's database it is shared: the management CLI writes users, clients and grants while
 * `skein-idp serve` reads them, so the file runs in WAL mode with normal locking and a busy
 * timeout, and the server reads grants fresh for every request (a revoke takes effect on the
 * next evaluation). The schema is a list of append-only migrations recorded in
 * `PRAGMA user_version`; a newer file than this build knows is refused.
 */

import { DatabaseSync } from "node:sqlite";
import { idpError } from "../errors.ts";

/** How long a writer waits for another process's write lock: CLI writes are tiny. */
const BUSY_TIMEOUT_MS = 5000;

const MIGRATIONS: readonly string[] = [
  // 1: the directory (users, groups, clients), grants, placements, oidc-provider's models.
  `
  CREATE TABLE users (name TEXT PRIMARY KEY, password_hash TEXT NOT NULL) STRICT;
  CREATE TABLE groups (name TEXT PRIMARY KEY) STRICT;
  -- member is a subject text: user:NAME or client:ID.
  CREATE TABLE members (
    group_name TEXT NOT NULL REFERENCES groups (name),
    member TEXT NOT NULL,
    PRIMARY KEY (member, group_name)
  ) STRICT;
  CREATE TABLE clients (
    id TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    app_database TEXT
  ) STRICT;
  -- subject is user:NAME, client:ID or group:NAME; level 1 read, 2 write, 3 admin.
  -- depth 1..4 (db, collection, branch, prefix); deeper columns are '' above their depth.
  CREATE TABLE grants (
    subject TEXT NOT NULL,
    level INTEGER NOT NULL,
    database TEXT NOT NULL,
    collection TEXT NOT NULL,
    branch TEXT NOT NULL,
    prefix TEXT NOT NULL,
    depth INTEGER NOT NULL,
    PRIMARY KEY (subject, database, depth, collection, branch, prefix, level)
  ) STRICT;
  -- branch '' is the placement of the collection itself.
  CREATE TABLE placements (
    database TEXT NOT NULL,
    collection TEXT NOT NULL,
    branch TEXT NOT NULL,
    PRIMARY KEY (database, collection, branch)
  ) STRICT;
  CREATE TABLE oidc (
    model TEXT NOT NULL,
    id TEXT NOT NULL,
    payload TEXT NOT NULL,
    grant_id TEXT,
    uid TEXT,
    user_code TEXT,
    expires_at INTEGER,
    PRIMARY KEY (model, id)
  ) STRICT;
  CREATE INDEX oidc_grant ON oidc (grant_id) WHERE grant_id IS NOT NULL;
  CREATE INDEX oidc_uid ON oidc (uid) WHERE uid IS NOT NULL;
  CREATE INDEX oidc_user_code ON oidc (user_code) WHERE user_code IS NOT NULL;
  `,
  // 2: databases whose new placements the operator has frozen (`placement freeze`).
  `
  CREATE TABLE frozen_databases (database TEXT PRIMARY KEY) STRICT;
  `,
];

export function openIdpDatabase(file: string): DatabaseSync {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file);
  } catch (error) {
    throw idpError("data_dir_unusable", `cannot open ${file}`, error);
  }
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA foreign_keys = ON");
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function migrate(db: DatabaseSync): void {
  db.exec("BEGIN IMMEDIATE");
  try {
    const row = db.prepare("PRAGMA user_version").get() as { user_version: number };
    const current = row.user_version;
    if (current > MIGRATIONS.length) {
      throw idpError(
        "schema_too_new",
        `the database has schema version ${current}; this build knows ${MIGRATIONS.length}`,
      );
    }
    for (let version = current + 1; version <= MIGRATIONS.length; version++) {
      db.exec(MIGRATIONS[version - 1]!);
    }
    db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
    db.exec("COMMIT");
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
