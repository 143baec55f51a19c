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
import type { EmbedService } from "../embed/service.ts";
import { embedTexts, enableField, fieldStatus, readVectors } from "../embed/verbs.ts";
import { backupStore } from "../engine/backup.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import type { QueryService } from "../query/service.ts";
import { requests } from "./requests.ts";

export interface Session {
  /** The client's name from hello: the default author of its commits. */
  readonly client: string;
}

/** Services beside the store that some verbs use; null when not configured. */
export interface VerbServices {
  readonly queries: QueryService | null;
  readonly embed: EmbedService | null;
}

const NO_SERVICES: VerbServices = { queries: null, embed: null };

type Requests = typeof requests;
type Handler<V extends keyof Requests> = (
  store: Store,
  args: Decoded<Requests[V]>,
  session: Session,
  services: VerbServices,
) => unknown;

const handlers: { [V in keyof Requests]: Handler<V> } = {
  "collections.list": (store, a) => store.listCollections(a.after, a.limit),
  "collections.create": (store, a, s) => store.createCollection(a.collection, a.author ?? s.client),
  "collections.delete": (store, a) => store.deleteCollectionInSteps(a.collection),
  "branches.list": (store, a) => store.listBranches(a.collection, a.after, a.limit),
  "branches.create": (store, a) =>
    store.createBranch(a.collection, a.branch, { branch: a.from_branch, version: a.from_version }),
  "branches.delete": (store, a) => store.deleteBranchInSteps(a.collection, a.branch),
  "document.get": (store, a) => store.get(a, a.key),
  "document.put": (store, a, s) =>
    store.putPipelined(a, a.records ?? [{ key: a.key!, value: a.value }], a.author ?? s.client),
  "document.delete": (store, a, s) =>
    store.deletePipelined(a, a.keys ?? [a.key!], a.author ?? s.client),
  "document.list": (store, a) => store.list(a, a),
  "document.append_prune": (store, a, s) =>
    store.appendPrunePipelined(a, a.key, a.records, a.keep, a.author ?? s.client),
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
  "store.stats": (store) => store.stats(),
  "store.backup": (store, a) => backupStore(store.ctx, a.path),
  "query.run": (store, a, _s, services) => {
    if (services.queries === null) throw storeError("query_disabled");
    return services.queries.run(store, a);
  },
  "embed.texts": (_store, a, _s, services) => embedTexts(services.embed, a.kind, a.texts),
  "embed.enable": (store, a, _s, services) =>
    enableField(store, services.embed, a.collection, a.field),
  "embed.status": (store, a, _s, services) => fieldStatus(store, services.embed, a.collection),
  "embed.vectors": (store, a, _s, services) => readVectors(store, services.embed, a),
};

export const VERBS = Object.keys(handlers) as (keyof Requests)[];

/** The verbs a server with these services serves: `query.run` only with a query service. */
export function servedVerbs(services: VerbServices): readonly string[] {
  return VERBS.filter((verb) =>
    verb === "query.run"
      ? services.queries !== null
      : !verb.startsWith("embed.") || services.embed !== null,
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
  if (!Object.hasOwn(handlers, verb)) {
    throw storeError("unknown_verb", `unknown verb ${JSON.stringify(verb)}`);
  }
  const name = verb as keyof Requests;
  const decoder = requests[name] as Decoder<unknown>;
  let decoded: unknown;
  try {
    decoded = decodeOrThrow(decoder, args ?? {});
  } catch (error) {
    if (error instanceof DecodeError) {
      throw storeError("invalid_request", `${verb}: ${error.message}`);
    }
    throw error;
  }
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
