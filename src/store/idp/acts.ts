/**
 * What the identity provider is asked for each verb: the action is always the verb's own name
 * (the IdP maps names to read, write and admin); the resource is chosen here, in one table.
 * An act is decided in one of three ways:
 *
 * - `one`: one resource, decided before the verb runs (a denial is `permission_denied`, and
 *   the caller learns nothing about what exists there);
 * - `each`: several records, decided in one batch before the verb runs; any denial refuses
 *   the whole request (a put or delete of many keys is all or nothing, as its commit is);
 * - `rows`: decided after the verb reads its page, one decision per row in one batch; denied
 *   rows are left out of the page and counted in its `denied`.
 *
 * `collections.create` is decided on the database it creates in (a new collection does not
 * exist at the IdP until it is placed); `branches.create` on the new branch itself. A verb missing from the table is denied: every act is
 * decided, and a verb added without a row here is refused, never allowed.
 *
 * Refs: a ref (a version, `from`, `to`, `before`, `from_version`) reads the branch it names
 * (a tag the branch it was taken on; `tagRefsAsBranches` rewrites tags before the decision).
 * Every verb names in `reads` each branch its refs read other than the one it acts on, and
 * the gate decides `READ_ACTION` on it (the whole branch) in the same batch as the verb's
 * own act: no ref reaches into a branch the caller may not read, whatever the verb's own
 * action allows (a revert writes one branch and reads another). A ref into the request's own
 * branch adds nothing: the verb's own decision is on that branch.
 *
 * Scopes: every page-filtered verb also names its `scope`, the resources that cover every row
 * its page can hold (for records, the branch or the records under the request's prefix: by
 * the contract's decision rule a grant covering the branch or a prefix covers every record
 * under it; for the name lists, the database). A caller allowed the whole scope sees the page as it is; any other caller is a
 * partial reader, whose denied rows are left out and counted only where the caller did not
 * choose the range (`narrows`): see docs/identity.md, "What a page-filtered verb reveals".
 */

export interface Resource {
  readonly type: string;
  readonly id: string;
  readonly properties?: Readonly<Record<string, string>>;
}

export function databaseResource(database: string): Resource {
  return { type: "service.database", id: database };
}

export function collectionResource(database: string, collection: string): Resource {
  return {
    type: "service.collection",
    id: `${database}/${collection}`,
    properties: { database, collection },
  };
}

export function branchResource(database: string, collection: string, branch: string): Resource {
  return {
    type: "service.branch",
    id: `${database}/${collection}/${branch}`,
    properties: { database, collection, branch },
  };
}

export function recordResource(
  database: string,
  collection: string,
  branch: string,
  key: string,
): Resource {
  return {
    type: "service.record",
    id: `${database}/${collection}/${branch}/${key}`,
    properties: { database, collection, branch, key },
  };
}

/** The decoded arguments the table reads (every verb's decoder gives a subset). */
export interface ActArgs {
  readonly collection?: string;
  readonly branch?: string;
  readonly from_branch?: string;
  /** Refs (engine/refs.ts); a tag ref is rewritten to `branch@version` before the decision. */
  readonly version?: number | string;
  readonly from?: number | string;
  readonly to?: number | string;
  /** history.list's ref: the history listed is the request's branch, older than it. */
  readonly before?: number | string;
  readonly into?: string;
  /** branches.create's source: `from_version` is a ref, `from_branch` the branch it reads by number. */
  readonly from_version?: number | string;
  readonly prefix?: string;
  /** A page's size, as requested (absent: the store's default). */
  readonly limit?: number;
  readonly key?: string;
  readonly keys?: readonly string[];
  readonly records?: readonly { key: string }[];
  /** A merge's or revert's preview: writes nothing (see `previews`). */
  readonly dry_run?: boolean;
}

/**
 * The action a ref's branch is decided with when the verb's own action is not a read: what a
 * merge, a revert or a new branch takes from the version is its records, every one of them.
 */
export const READ_ACTION = "document.list";

/** A page field of rows and, for each row, the resources that must all be allowed. */
export interface RowsRule {
  readonly field: string;
  resources(database: string, args: ActArgs, row: Record<string, unknown>): Resource[];
  /** Resources covering every row the page can hold (absent: each row is decided alone). */
  scope?(database: string, args: ActArgs): Resource[];
  /**
   * Whether the request chose what it examines (a prefix, a position in clear, a question):
   * denied counts over a range the caller chose answer questions about keys it may not read,
   * so a partial reader is refused such a request.
   */
  narrows?(args: ActArgs, chosenPosition: boolean): boolean;
  /**
   * A search's ranking statistics (BM25's term and length counts) span the branch: unless
   * the caller may read this resource, it ranks among the records of its scope only.
   */
  statistics?(database: string, args: ActArgs): Resource;
  /** A partial reader's page is filled with rows it may read (name-pages.ts). */
  readonly fills?: boolean;
}

/** Branches a verb reads through its refs besides the one it acts on, decided `READ_ACTION`. */
type Reads = (args: ActArgs) => string[];

export type Act = (
  | { readonly kind: "one"; resource(database: string, args: ActArgs): Resource }
  | { readonly kind: "each"; resources(database: string, args: ActArgs): Resource[] }
  | ({ readonly kind: "rows" } & RowsRule)
) & {
  readonly reads?: Reads;
  /**
   * With `dry_run`, the verb writes nothing and answers what its own resources and its refs
   * hold: it is decided `READ_ACTION` on them, so a reviewer who may read both branches sees
   * the preview. The verb's own act is asked in the same batch and answered as the
   * preview's `allowed`, so the reviewer also learns whether the act itself would be refused.
   */
  readonly previews?: true;
};

const db = (d: string) => databaseResource(d);
const coll = (d: string, a: ActArgs) => collectionResource(d, a.collection!);
const branch = (d: string, a: ActArgs) => branchResource(d, a.collection!, a.branch ?? "main");
const record = (d: string, a: ActArgs, key: string) =>
  recordResource(d, a.collection!, a.branch ?? "main", key);
/** The branch a ref reads (a version number reads `fallback`). */
const refBranch = (ref: number | string | undefined, fallback: string): string => {
  if (ref === undefined || typeof ref === "number") return fallback;
  const at = ref.lastIndexOf("@");
  return at >= 0 ? ref.slice(0, at) : ref;
};
/** The branch a read verb's `version` ref reads. */
const readBranch = (a: ActArgs) => refBranch(a.version, a.branch ?? "main");
const readRecord = (d: string, a: ActArgs, key: string) =>
  recordResource(d, a.collection!, readBranch(a), key);
/**
 * What a read at the request's ref ranges over: the records under its prefix (a key cannot
 * hold NUL, so such a prefix is decided as the whole branch), or the whole branch.
 */
const readScope = (d: string, a: ActArgs): Resource =>
  a.prefix !== undefined && a.prefix !== "" && !a.prefix.includes("\0")
    ? readRecord(d, a, a.prefix)
    : branchResource(d, a.collection!, readBranch(a));
/** The ref's branch when it is not `own` (a ref of the request's own branch adds nothing). */
const otherThan = (own: string, read: string): string[] => (read === own ? [] : [read]);
/** The branch a read verb's `version` names, when it is not the request's own. */
const versionReads: Reads = (a) => otherThan(a.branch ?? "main", readBranch(a));

/**
 * The name lists (collections, branches, tags). Only a grant on the database covers every
 * row such a list can hold: a collection grant covers no other collection, and none of its
 * own branches that were never placed, so reading a collection whole does not mean that no
 * branch (or tag taken on one) is denied there. Any other caller is a partial reader, who
 * pages from the start with the positions the store gave (an `after` of its own choosing
 * would make `denied` count the names after a point it chose), and its pages are filled, so
 * that they do not show where hidden names sort among its own.
 */
const NAME_LIST: Pick<RowsRule, "scope" | "narrows" | "fills"> = {
  scope: (d) => [databaseResource(d)],
  narrows: (_a, chosen) => chosen,
  fills: true,
};

export const ACTS: Readonly<Record<string, Act>> = {
  "collections.list": {
    kind: "rows",
    field: "rows",
    resources: (d, _a, row) => [collectionResource(d, String(row.name))],
    ...NAME_LIST,
  },
  "collections.create": { kind: "one", resource: db },
  "collections.delete": { kind: "one", resource: coll },
  "branches.list": {
    kind: "rows",
    field: "rows",
    resources: (d, a, row) => [branchResource(d, a.collection!, String(row.name))],
    ...NAME_LIST,
  },
  // Decided on the new branch (the IdP decides a creation as if it were placed: a grant that
  // will cover it lets its holder make it); it holds every record its source ref names.
  "branches.create": {
    kind: "one",
    resource: branch,
    reads: (a) => [refBranch(a.from_version, a.from_branch ?? "main")],
  },
  "branches.delete": { kind: "one", resource: branch },
  "branches.merge": {
    kind: "each",
    // Writes `into`; reads the branch `from` names.
    resources: (d, a) => [branchResource(d, a.collection!, a.into!)],
    reads: (a) => otherThan(a.into!, refBranch(a.from, a.into!)),
    previews: true,
  },
  // Writes the branch; its changes are read from the version `version` names.
  "branches.revert": { kind: "one", resource: branch, reads: versionReads, previews: true },
  "tags.create": {
    kind: "one",
    resource: (d, a) => branchResource(d, a.collection!, readBranch(a)),
  },
  "tags.list": {
    kind: "rows",
    field: "rows",
    resources: (d, a, row) => [branchResource(d, a.collection!, String(row.branch))],
    ...NAME_LIST,
  },
  "tags.delete": { kind: "one", resource: coll },
  "document.get": {
    kind: "one",
    resource: (d, a) => readRecord(d, a, a.key!),
    reads: versionReads,
  },
  "document.put": {
    kind: "each",
    resources: (d, a) => (a.records?.map((r) => r.key) ?? [a.key!]).map((k) => record(d, a, k)),
  },
  "document.delete": {
    kind: "each",
    resources: (d, a) => (a.keys ?? [a.key!]).map((k) => record(d, a, k)),
  },
  "document.append_prune": { kind: "one", resource: (d, a) => record(d, a, a.key!) },
  "document.list": {
    kind: "rows",
    field: "rows",
    resources: (d, a, row) => [readRecord(d, a, String(row.key))],
    scope: (d, a) => [readScope(d, a)],
    narrows: (a, chosen) => chosen || (a.prefix !== undefined && a.prefix !== ""),
    reads: versionReads,
  },
  // The branch listed, and the one `before` names (its version bounds the page: a read).
  "history.list": {
    kind: "each",
    resources: (d, a) => {
      const own = a.branch ?? "main";
      const named = refBranch(a.before, own);
      return named === own
        ? [branch(d, a)]
        : [branch(d, a), branchResource(d, a.collection!, named)];
    },
  },
  "history.release": { kind: "one", resource: db },
  "changes.list": {
    kind: "rows",
    field: "changes",
    // A row shows both sides: when they come from two branches, both must be readable.
    resources: (d, a, row) => {
      const key = String(row.key);
      const toBranch = refBranch(a.to, a.branch ?? "main");
      const from = refBranch(a.from, a.from_branch ?? a.branch ?? "main");
      const to = recordResource(d, a.collection!, toBranch, key);
      return from === toBranch ? [to] : [to, recordResource(d, a.collection!, from, key)];
    },
    scope: (d, a) => {
      const to = refBranch(a.to, a.branch ?? "main");
      const from = refBranch(a.from, a.from_branch ?? a.branch ?? "main");
      return [to, ...otherThan(to, from)].map((b) => branchResource(d, a.collection!, b));
    },
    // The versions compared are the caller's choice, but they select commits, not keys.
    narrows: (_a, chosen) => chosen,
    // `from_branch` names the branch the `from` side is read on, as a ref would.
    reads: (a) => {
      const own = a.branch ?? "main";
      const to = refBranch(a.to, own);
      const from = refBranch(a.from, a.from_branch ?? own);
      return [...new Set([...otherThan(own, to), ...otherThan(own, from)])];
    },
  },
  "store.stats": { kind: "one", resource: db },
  // A backup copies every record of the database.
  "store.backup": { kind: "one", resource: db },
  // A query's outputs are derived from many records and cannot be filtered row by row, so
  // it needs read on every record it ranges over: the branch, or the records under its prefix.
  "query.run": { kind: "one", resource: readScope, reads: versionReads },
  // Texts given in the request are not records: embedding them is an act on the database.
  "embed.texts": { kind: "one", resource: db },
  // Binding a field changes the collection; its status and vectors are read on it.
  "embed.enable": { kind: "one", resource: coll },
  "embed.status": { kind: "one", resource: coll },
  // Already decided on the whole branch its `version` reads.
  "embed.vectors": {
    kind: "one",
    resource: (d, a) => branchResource(d, a.collection!, readBranch(a)),
  },
  // A search answers records (keys, values) like a list: each row needs read on its record
  // (on the branch its ref reads), and denied rows are left out.
  "search.text": {
    kind: "rows",
    field: "rows",
    resources: (d, a, row) => [readRecord(d, a, String(row.key))],
    scope: (d, a) => [readScope(d, a)],
    // The question chooses the records ranked: a partial reader searches a prefix it reads whole.
    narrows: () => true,
    statistics: (d, a) => branchResource(d, a.collection!, readBranch(a)),
    reads: versionReads,
  },
};

/**
 * The args with each ref that names a tag (and no branch) rewritten as the tag's source
 * branch, so a read through a tag is decided on the branch it was taken from.
 * `tagBranch` answers from the store's tags (null: no such tag, or a branch by that name).
 */
export function tagRefsAsBranches(
  args: ActArgs,
  tagBranch: (collection: string, name: string) => string | null,
): ActArgs {
  if (args.collection === undefined) return args;
  let out = args;
  for (const field of ["version", "from", "to", "before", "from_version"] as const) {
    const ref = args[field];
    if (typeof ref !== "string" || ref.includes("@")) continue;
    const branch = tagBranch(args.collection, ref);
    if (branch !== null) out = { ...out, [field]: branch };
  }
  return out;
}
