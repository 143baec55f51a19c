/**
 * The verb table: for each verb, decode its arguments once and call one engine operation.
 * Handlers are thin on purpose (no model logic here); the same table serves every
 * connection. A decode refusal becomes `invalid_request` with the field path in the
 * message. The commit verbs (`PIPELINED_VERBS`) return a promise of their answer once the
 * commit is durable. The deleting verbs (`collections.delete`, `branches.delete`,
 * `history.release`) return a promise: their sweep runs in steps and they are answered
 * when it ends. `query.run` returns a promise too: its records are read between turns.
 */

import {
  type Decoded,
  DecodeError,
  type Decoder,
  decodeOrThrow,
} from "../../common/decode/index.ts";
import { deleteBranchAndVectors, deleteCollectionAndVectors } from "../embed/follow.ts";
import type { EmbedService } from "../embed/service.ts";
import { embedTexts, enableField, fieldStatus, readVectors } from "../embed/verbs.ts";
import { backupStore } from "../engine/backup.ts";
import type { Signed } from "../engine/commit.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import type { QueryService } from "../query/service.ts";
import type { SearchService } from "../search/service.ts";
import { searchText } from "../search/verb.ts";
import { requests } from "./requests.ts";

export interface Session {
  /** The client's name from hello. */
  readonly client: string;
  /** The default author of its commits: the pass's subject with `idp`, else the client. */
  readonly author: string;
  /**
   * Set for one request of a caller that may not read the whole branch (the idp gate): a
   * search ranks among the records of its prefix only, so no other record sways its scores.
   */
  readonly isolated?: boolean;
}

/** Services beside the store that some verbs use; null when not configured. */
export interface VerbServices {
  readonly queries: QueryService | null;
  readonly embed: EmbedService | null;
  /** Search over embedded fields (with the embedding group). */
  readonly search?: SearchService | null;
}

const NO_SERVICES: VerbServices = { queries: null, embed: null, search: null };

type Requests = typeof requests;
type Handler<V extends keyof Requests> = (
  store: Store,
  args: Decoded<Requests[V]>,
  session: Session,
  services: VerbServices,
) => unknown;

const handlers: { [V in keyof Requests]: Handler<V> } = {
  "collections.list": (store, a) => store.listCollections(a.after, a.limit),
  "collections.create": (store, a, s) => store.createCollection(a.collection, signer(a, s)),
  "collections.delete": (store, a, _s, services) =>
    deleteCollectionAndVectors(store, a.collection).then((swept) => {
      services.search?.forget(a.collection);
      return swept;
    }),
  "branches.list": (store, a) => store.listBranches(a.collection, a.after, a.limit),
  "branches.create": (store, a) =>
    store.createBranch(a.collection, a.branch, { branch: a.from_branch, version: a.from_version }),
  "branches.delete": (store, a, _s, services) =>
    deleteBranchAndVectors(store, a.collection, a.branch).then((swept) => {
      services.search?.forget(a.collection, a.branch);
      return swept;
    }),
  "branches.merge": (store, a, s) =>
    store.merge(a.collection, a.from, a.into, {
      strategy: a.strategy,
      dryRun: a.dry_run,
      by: signer(a, s),
      expectHead: a.expect_head,
      expectFrom: a.expect_from,
    }),
  "branches.revert": (store, a, s) =>
    store.revert(a.collection, a.branch, a.version, {
      strategy: a.strategy,
      dryRun: a.dry_run,
      by: signer(a, s),
      expectHead: a.expect_head,
    }),
  "tags.create": (store, a, s) =>
    store.createTag(a.collection, a.tag, { branch: a.branch, version: a.version }, signer(a, s)),
  "tags.list": (store, a) => store.listTags(a.collection, a.after, a.limit),
  "tags.delete": (store, a) => store.deleteTagInSteps(a.collection, a.tag),
  "document.get": (store, a) => store.get(a, a.key),
  "document.put": (store, a, s) =>
    store.putPipelined(
      a,
      a.records ?? [{ key: a.key!, value: a.value }],
      signer(a, s),
      a.expect_head,
    ),
  "document.delete": (store, a, s) =>
    store.deletePipelined(a, a.keys ?? [a.key!], signer(a, s), a.expect_head),
  "document.list": (store, a) => store.list(a, a),
  "document.append_prune": (store, a, s) =>
    store.appendPrunePipelined(a, a.key, a.records, a.keep, signer(a, s)),
  "history.list": (store, a) => store.history(a.collection, a.branch, a.before, a.limit),
  "history.release": (store) => store.releaseInSteps(),
  "changes.list": (store, a) =>
    store.changes({
      collection: a.collection,
      branch: a.branch,
      fromBranch: a.from_branch,
      from: a.from,
      to: a.to,
      limit: a.limit,
      cursor: a.cursor,
    }),
  "store.stats": (store, _a, _s, services) => ({
    ...store.stats(),
    ...(services.search ? { search: services.search.stats() } : {}),
  }),
  "store.backup": (store, a) => backupStore(store.ctx, a.path),
  "query.run": (store, a, _s, services) => {
    if (services.queries === null) throw storeError("query_disabled");
    return services.queries.run(store, a);
  },
  "embed.texts": (_store, a, _s, services) => embedTexts(services.embed, a.kind, a.texts),
  "embed.enable": (store, a, _s, services) =>
    enableField(store, services.embed, a.collection, a.field),
  "embed.status": (store, a, _s, services) => fieldStatus(store, services.embed, a.collection),
  "embed.vectors": (store, a, _s, services) =>
    readVectors(store, services.embed, { ...a, ...atRef(store, a) }),
  "search.text": (store, a, s, services) =>
    searchText(store, services, { ...a, ...atRef(store, a), isolated: s.isolated === true }),
};

/** Author and message of a committing verb: the caller's, else the session's author. */
function signer(
  a: { author?: string | undefined; message?: string | undefined },
  s: Session,
): Signed {
  return { author: a.author ?? s.author, message: a.message };
}

/**
 * A ref string resolved to the branch it reads and its version number (embedding markers and
 * search indexes name data versions of a branch).
 */
function atRef(
  store: Store,
  a: { collection: string; branch: string; version?: number | string | undefined },
): { branch: string; version: number | undefined } {
  if (typeof a.version !== "string") return { branch: a.branch, version: a.version };
  const resolved = store.resolve(a.collection, a.branch, a.version);
  return { branch: resolved.branch, version: resolved.version.version };
}

export const VERBS = Object.keys(handlers) as (keyof Requests)[];

/** The verbs a server with these services serves: `query.run` only with a query service. */
export function servedVerbs(services: VerbServices): readonly string[] {
  return VERBS.filter((verb) =>
    verb === "query.run"
      ? services.queries !== null
      : !(verb.startsWith("embed.") || verb.startsWith("search.")) || services.embed !== null,
  );
}

/**
 * Verbs that commit through the store's pipeline and may run while commits are in flight;
 * every other verb runs only once the pipeline is idle (the server waits for it).
 */
export const PIPELINED_VERBS: ReadonlySet<string> = new Set<keyof Requests>([
  "document.put",
  "document.delete",
  "document.append_prune",
]);

export function runVerb(
  store: Store,
  verb: string,
  args: unknown,
  session: Session,
  services: VerbServices = NO_SERVICES,
): unknown {
  return runDecoded(store, verb, decodeArgs(verb, args), session, services);
}

/** Runs a verb from args `decodeArgs` already decoded (the identity gate decodes them first). */
export function runDecoded(
  store: Store,
  verb: string,
  decoded: unknown,
  session: Session,
  services: VerbServices = NO_SERVICES,
): unknown {
  const name = verb as keyof Requests;
  return (handlers[name] as Handler<typeof name>)(store, decoded as never, session, services);
}

/**
 * A verb's arguments decoded, refused as `runVerb` refuses them: what the identity provider's
 * decision is made from before the verb runs.
 */
export function decodeArgs(verb: string, args: unknown): unknown {
  if (!Object.hasOwn(handlers, verb)) {
    throw storeError("unknown_verb", `unknown verb ${JSON.stringify(verb)}`);
  }
  try {
    return decodeOrThrow(requests[verb as keyof Requests] as Decoder<unknown>, args ?? {});
  } catch (error) {
    if (error instanceof DecodeError)
      throw storeError("invalid_request", `${verb}: ${error.message}`);
    throw error;
  }
}
