/**
 * The names the identity provider deals in, and the grant resource grammar. Store names
 * (database, collection, branch) follow the store's own rules so that a grant can only name
 * something the store can hold; user, client and group names are printable names without
 * `:` or `/`, because they appear inside `user:NAME` subjects. A grant resource is
 * `db/D[/c/C[/b/B[/p/PREFIX]]]`; the prefix is everything after `/p/` (keys may hold `/`).
 * `B` may end in `*` (`b/agent-*`): a branch pattern, every branch whose name starts with
 * what comes before it; `*` is no store name character, so a pattern never names a branch.
 */

import { MAX_KEY_BYTES, MAX_NAME_BYTES, MAX_STORE_NAME_BYTES } from "./bounds.ts";
import { idpError } from "./errors.ts";

const DATABASE = /^[A-Za-z0-9_-]+$/;
const STORE_NAME = /^[A-Za-z0-9_.-]+$/;
const PRINCIPAL = /^[A-Za-z0-9_.@+-]+$/;

export function isDatabaseName(value: string): boolean {
  return DATABASE.test(value) && Buffer.byteLength(value) <= MAX_STORE_NAME_BYTES;
}

export function isStoreName(value: string): boolean {
  return (
    STORE_NAME.test(value) &&
    value !== "." &&
    value !== ".." &&
    Buffer.byteLength(value) <= MAX_STORE_NAME_BYTES
  );
}

export function isKeyPrefix(value: string): boolean {
  return !value.includes("\u0000") && Buffer.byteLength(value) <= MAX_KEY_BYTES;
}

export function isPrincipalName(value: string): boolean {
  return PRINCIPAL.test(value) && Buffer.byteLength(value) <= MAX_NAME_BYTES;
}

export const PRINCIPAL_RULE = "letters, digits, _ . @ + or -, at most 255 bytes";

/** The resource indicator (RFC 8707) of a store database. */
export function storeIndicator(database: string): string {
  return `urn:skein:store:${database}`;
}

const INDICATOR_PREFIX = "urn:skein:store:";

/** The database named by a store resource indicator, or undefined for anything else. */
export function indicatorDatabase(indicator: string): string | undefined {
  if (!indicator.startsWith(INDICATOR_PREFIX)) return undefined;
  const database = indicator.slice(INDICATOR_PREFIX.length);
  return isDatabaseName(database) ? database : undefined;
}

export type Level = 1 | 2 | 3;
export const LEVELS = { read: 1, write: 2, admin: 3 } as const;
export type LevelName = keyof typeof LEVELS;

/** A grant's scope in the hierarchy: deeper fields are undefined above their level. */
export interface GrantScope {
  readonly database: string;
  readonly collection?: string;
  /** A branch name, or a pattern `NAME*` (branchCovers). */
  readonly branch?: string;
  readonly prefix?: string;
}

function isBranchScope(text: string): boolean {
  return isStoreName(text.endsWith("*") ? text.slice(0, -1) : text);
}

/** Whether a grant's branch (a name, or a pattern `NAME*`) covers the branch `name`. */
export function branchCovers(scope: string, name: string): boolean {
  return scope.endsWith("*") ? name.startsWith(scope.slice(0, -1)) : scope === name;
}

/** Parses `db/D[/c/C[/b/B[/p/PREFIX]]]`; throws `invalid_resource` naming the part at fault. */
export function parseGrantResource(text: string): GrantScope {
  const bad = (why: string) => idpError("invalid_resource", `resource ${why}`);
  const parts = text.split("/");
  if (parts[0] !== "db" || parts[1] === undefined) throw bad("must start with db/DATABASE");
  const database = parts[1];
  if (!isDatabaseName(database)) throw bad("database must be letters, digits, _ or -");
  if (parts.length === 2) return { database };
  if (parts[2] !== "c" || parts[3] === undefined || !isStoreName(parts[3])) {
    throw bad("collection must follow as c/NAME (letters, digits, _, - or .)");
  }
  const collection = parts[3];
  if (parts.length === 4) return { database, collection };
  if (parts[4] !== "b" || parts[5] === undefined || !isBranchScope(parts[5])) {
    throw bad("branch must follow as b/NAME or b/NAME* (letters, digits, _, - or .)");
  }
  const branch = parts[5];
  if (parts.length === 6) return { database, collection, branch };
  if (parts[6] !== "p") throw bad("key prefix must follow as p/PREFIX");
  const prefix = parts.slice(7).join("/");
  if (!isKeyPrefix(prefix)) throw bad("key prefix must be at most 1024 bytes without NUL");
  return { database, collection, branch, prefix };
}
