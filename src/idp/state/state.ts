/**
 * The identity provider's domain state over SQLite: users, groups and their members, clients,
 * grants and placements. The CLI and the server share it; every method is one short
 * statement (or one transaction), so a revoke from the CLI is seen by the server's next
 * evaluation. Secrets are stored only as scrypt hashes (see secrets.ts).
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import { transaction } from "../../common/sqlite-transaction.ts";
import { idpError } from "../errors.ts";
import type { GrantScope, Level } from "../names.ts";

export interface ClientRecord {
  readonly id: string;
  readonly secretHash: string;
  readonly redirectUris: readonly string[];
  readonly appDatabase: string | undefined;
}

/** A grant as the decision rule reads it: scope fields past its depth are undefined. */
export interface GrantRow {
  readonly level: Level;
  readonly scope: GrantScope;
}

export interface Grant {
  readonly subject: string;
  readonly level: Level;
  readonly scope: GrantScope;
}

function depthOf(scope: GrantScope): number {
  if (scope.prefix !== undefined) return 4;
  if (scope.branch !== undefined) return 3;
  if (scope.collection !== undefined) return 2;
  return 1;
}

function grantKey(grant: Grant): (string | number)[] {
  const s = grant.scope;
  return [
    grant.subject,
    grant.level,
    s.database,
    s.collection ?? "",
    s.branch ?? "",
    s.prefix ?? "",
    depthOf(s),
  ];
}

interface RawGrant {
  level: number;
  database: string;
  collection: string;
  branch: string;
  prefix: string;
  depth: number;
}

function toGrantRow(raw: RawGrant): GrantRow {
  const scope: { database: string; collection?: string; branch?: string; prefix?: string } = {
    database: raw.database,
  };
  if (raw.depth >= 2) scope.collection = raw.collection;
  if (raw.depth >= 3) scope.branch = raw.branch;
  if (raw.depth >= 4) scope.prefix = raw.prefix;
  return { level: raw.level as Level, scope };
}

export class IdpState {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  /** Writes through this connection to what decisions read (data_version misses those). */
  #writes = 0;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  get database(): DatabaseSync {
    return this.#db;
  }

  /**
   * Changes whenever what decisions read may have changed: SQLite's `data_version` moves with
   * every commit of another connection (the management CLI), `#writes` with this one's own
   * grants, members and placements. Equal marks: reads made under the first still hold.
   */
  changeMark(): string {
    const row = this.#sql("PRAGMA data_version").get() as { data_version: number };
    return `${row.data_version}:${this.#writes}`;
  }

  #sql(text: string): StatementSync {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      statement = this.#db.prepare(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }

  // Users, groups, members.

  addUser(name: string, passwordHash: string): void {
    const existing = this.#sql("SELECT 1 FROM users WHERE name = ?").get(name);
    if (existing !== undefined) throw idpError("user_exists", `user ${name} already exists`);
    this.#sql("INSERT INTO users (name, password_hash) VALUES (?, ?)").run(name, passwordHash);
  }

  passwordHash(name: string): string | undefined {
    const row = this.#sql("SELECT password_hash FROM users WHERE name = ?").get(name) as
      | { password_hash: string }
      | undefined;
    return row?.password_hash;
  }

  hasUser(name: string): boolean {
    return this.#sql("SELECT 1 FROM users WHERE name = ?").get(name) !== undefined;
  }

  addGroup(name: string): void {
    if (this.hasGroup(name)) throw idpError("group_exists", `group ${name} already exists`);
    this.#sql("INSERT INTO groups (name) VALUES (?)").run(name);
  }

  hasGroup(name: string): boolean {
    return this.#sql("SELECT 1 FROM groups WHERE name = ?").get(name) !== undefined;
  }

  /** Adds `member` (`user:NAME` or `client:ID`) to the group; false when it already was. */
  addMember(group: string, member: string): boolean {
    this.#writes++;
    if (!this.hasGroup(group)) throw idpError("unknown_group", `no group ${group}`);
    const result = this.#sql(
      "INSERT OR IGNORE INTO members (group_name, member) VALUES (?, ?)",
    ).run(group, member);
    return result.changes > 0;
  }

  groupsOf(member: string): string[] {
    const rows = this.#sql("SELECT group_name FROM members WHERE member = ?").all(member) as {
      group_name: string;
    }[];
    return rows.map((r) => r.group_name);
  }

  // Clients.

  addClient(client: ClientRecord): void {
    if (this.client(client.id) !== undefined) {
      throw idpError("client_exists", `client ${client.id} already exists`);
    }
    this.#sql(
      "INSERT INTO clients (id, secret_hash, redirect_uris, app_database) VALUES (?, ?, ?, ?)",
    ).run(
      client.id,
      client.secretHash,
      JSON.stringify(client.redirectUris),
      client.appDatabase ?? null,
    );
  }

  client(id: string): ClientRecord | undefined {
    const row = this.#sql(
      "SELECT id, secret_hash, redirect_uris, app_database FROM clients WHERE id = ?",
    ).get(id) as
      | { id: string; secret_hash: string; redirect_uris: string; app_database: string | null }
      | undefined;
    if (row === undefined) return undefined;
    return {
      id: row.id,
      secretHash: row.secret_hash,
      redirectUris: JSON.parse(row.redirect_uris) as string[],
      appDatabase: row.app_database ?? undefined,
    };
  }

  /** True when a `user:`, `client:` or `group:` subject names something that exists. */
  subjectExists(subject: string): boolean {
    const colon = subject.indexOf(":");
    const kind = subject.slice(0, colon);
    const name = subject.slice(colon + 1);
    if (kind === "user") return this.hasUser(name);
    if (kind === "client") return this.client(name) !== undefined;
    if (kind === "group") return this.hasGroup(name);
    return false;
  }

  // Grants.

  /** Adds a grant; false when the same grant already existed. */
  grant(grant: Grant): boolean {
    this.#writes++;
    const result = this.#sql(
      `INSERT OR IGNORE INTO grants (subject, level, database, collection, branch, prefix, depth)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(...grantKey(grant));
    return result.changes > 0;
  }

  /** Removes exactly that grant; false when there was none. */
  revoke(grant: Grant): boolean {
    this.#writes++;
    const result = this.#sql(
      `DELETE FROM grants WHERE subject = ? AND level = ? AND database = ? AND collection = ?
       AND branch = ? AND prefix = ? AND depth = ?`,
    ).run(...grantKey(grant));
    return result.changes > 0;
  }

  /** Every grant of the given subjects in one database (the decision rule filters them). */
  grantsIn(subjects: readonly string[], database: string): GrantRow[] {
    const out: GrantRow[] = [];
    const statement = this.#sql(
      `SELECT level, database, collection, branch, prefix, depth FROM grants
       WHERE subject = ? AND database = ?`,
    );
    for (const subject of subjects) {
      for (const raw of statement.all(subject, database) as unknown as RawGrant[]) {
        out.push(toGrantRow(raw));
      }
    }
    return out;
  }

  // Placements.

  /** Places a collection (branch undefined) or a branch, placing its collection too. */
  place(database: string, collection: string, branch: string | undefined): boolean {
    this.#writes++;
    return transaction(this.#db, () => {
      const insert = this.#sql(
        "INSERT OR IGNORE INTO placements (database, collection, branch) VALUES (?, ?, ?)",
      );
      const own = insert.run(database, collection, branch ?? "").changes > 0;
      if (branch !== undefined) insert.run(database, collection, "");
      return own;
    });
  }

  /** Removes a branch's placement, or a collection's with all its branches. */
  unplace(database: string, collection: string, branch: string | undefined): boolean {
    this.#writes++;
    if (branch !== undefined) {
      const sql = "DELETE FROM placements WHERE database = ? AND collection = ? AND branch = ?";
      return this.#sql(sql).run(database, collection, branch).changes > 0;
    }
    const sql = "DELETE FROM placements WHERE database = ? AND collection = ?";
    const removed = this.#sql(sql).run(database, collection).changes;
    return removed > 0;
  }

  /** Refuses new placements under `database` from now on; false when already frozen. */
  freezePlacements(database: string): boolean {
    const sql = "INSERT OR IGNORE INTO frozen_databases (database) VALUES (?)";
    return this.#sql(sql).run(database).changes > 0;
  }

  /** Accepts new placements under `database` again; false when it was not frozen. */
  thawPlacements(database: string): boolean {
    return this.#sql("DELETE FROM frozen_databases WHERE database = ?").run(database).changes > 0;
  }

  placementsFrozen(database: string): boolean {
    const sql = "SELECT 1 FROM frozen_databases WHERE database = ?";
    return this.#sql(sql).get(database) !== undefined;
  }

  isPlaced(database: string, collection: string, branch: string | undefined): boolean {
    const sql = "SELECT 1 FROM placements WHERE database = ? AND collection = ? AND branch = ?";
    return this.#sql(sql).get(database, collection, branch ?? "") !== undefined;
  }
}
