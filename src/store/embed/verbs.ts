/**
 * The embedding verbs' handlers, kept beside the service so the verb table stays thin:
 * `embed.texts` answers vectors directly (as arrays of numbers, one per window);
 * `embed.enable` binds a field, `embed.status` shows the walk's progress and
 * `embed.vectors` reads a version's vectors.
 */

import type { SkeinError } from "../../common/errors.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import { companionMarker, decodeVectors, readBindings } from "./companions.ts";
import {
  type Binding,
  companionOf,
  modelChange,
  parseFieldPath,
  parseMarker,
  REGISTRY,
} from "./fields.ts";
import type { EmbedService } from "./service.ts";

export interface TextsAnswer {
  readonly model: string;
  readonly dims: number;
  /** Per text, its windows' vectors (one vector when windows are off, and for questions). */
  readonly vectors: number[][][];
}

export async function embedTexts(
  service: EmbedService | null,
  kind: "document" | "question",
  texts: readonly string[],
): Promise<TextsAnswer> {
  if (service === null) throw storeError("embed_disabled");
  const results = await service.embed(kind, texts);
  const vectors = results.map((result) => {
    if (!result.ok) throw result.refusal;
    return result.windows.map((v) => Array.from(v));
  });
  return { model: service.identity, dims: service.dims ?? 0, vectors };
}

function available(service: EmbedService | null): EmbedService {
  if (service === null) throw storeError("embed_disabled");
  if (service.failure !== undefined) throw service.failure;
  return service;
}

/** `embed.enable`: binds a field to the store's model; the walk embeds it from then on. */
export function enableField(
  store: Store,
  service: EmbedService | null,
  collection: string,
  field: string,
): StatusAnswer {
  const embed = available(service);
  store.listBranches(collection, undefined, 1); // collection_not_found
  parseFieldPath(field);
  const existing = readBindings(store).get(collection);
  const changed = existing && modelChange(collection, existing, embed.identity);
  if (changed !== undefined) throw changed;
  if (existing !== undefined && existing.field !== field) {
    throw storeError(
      "invalid_request",
      `embed.enable: ${collection} already embeds field ${JSON.stringify(existing.field)}`,
    );
  }
  if (existing === undefined) {
    for (const name of [REGISTRY, companionOf(collection)]) {
      if (!hasCollection(store, name)) store.createCollection(name, "skein-embed");
    }
    const binding: Binding = { field, model: embed.identity };
    store.put(
      { collection: REGISTRY, branch: "main" },
      [{ key: collection, value: binding }],
      "skein-embed",
    );
    embed.walker?.wake();
  }
  return fieldStatus(store, embed, collection);
}

export interface BranchStatus {
  readonly branch: string;
  /** The data branch's head version. */
  readonly head: number;
  /** The data version whose vectors are complete on this branch (null: none yet). */
  readonly embedded: number | null;
  /** The data version a pass under way brings it to (null: none under way). */
  readonly walking: number | null;
  /** Records with vectors on this branch. */
  readonly records_embedded: number;
}

export interface StatusAnswer {
  readonly collection: string;
  readonly field: string;
  readonly model: string;
  /** Branches whose vectors are behind their head. */
  readonly pending: number;
  readonly records_embedded: number;
  /** Records the walk could not embed since the store started (too long, over the cap). */
  readonly records_refused: number;
  readonly branches: BranchStatus[];
  /** The walk's last failure for this collection, if its last round failed. */
  readonly error: { code: string; message: string } | null;
}

/** `embed.status`: progress of a collection's embedded field. */
export function fieldStatus(
  store: Store,
  service: EmbedService | null,
  collection: string,
): StatusAnswer {
  if (service === null) throw storeError("embed_disabled");
  const binding = readBindings(store).get(collection);
  if (binding === undefined) {
    throw storeError("embed_field_not_found", `${collection} has no embedded field`);
  }
  const companion = companionOf(collection);
  const branches: BranchStatus[] = [];
  let after: string | undefined;
  do {
    const page = store.listBranches(collection, after, 100);
    for (const row of page.rows) {
      const marker = companionMarker(store, companion, row.name);
      const own = marker !== undefined && marker.branch === row.name && marker.at !== 0;
      branches.push({
        branch: row.name,
        head: row.head.version,
        embedded: own ? marker.at : null,
        walking: marker?.to ?? null,
        records_embedded: marker?.count ?? 0,
      });
    }
    after = page.next ?? undefined;
  } while (after !== undefined);
  const failure =
    modelChange(collection, binding, service.identity) ??
    service.failure ??
    service.walker?.error(collection);
  return {
    collection,
    field: binding.field,
    model: binding.model,
    pending: branches.filter((b) => b.embedded !== b.head).length,
    records_embedded: branches.reduce((sum, b) => sum + b.records_embedded, 0),
    records_refused: service.walker?.refused.get(collection) ?? 0,
    branches,
    error: failure === undefined ? null : { code: failure.code, message: failure.message },
  };
}

/**
 * `embed.vectors`: the vectors of records at a data version of a branch (default: the
 * latest version embedded). A version whose vectors are not (or no longer) kept:
 * embed_version_not_embedded.
 */
export function readVectors(
  store: Store,
  service: EmbedService | null,
  args: { collection: string; branch: string; version?: number | undefined; keys: string[] },
): { version: number; vectors: Record<string, number[][] | null> } {
  if (service === null) throw storeError("embed_disabled");
  const companion = companionOf(args.collection);
  const found = findEmbedded(store, companion, args.branch, args.version);
  if (found === undefined) {
    throw storeError(
      "embed_version_not_embedded",
      `${args.collection}/${args.branch} has no vectors${args.version === undefined ? " yet" : ` of version ${args.version}`}`,
    );
  }
  const vectors: Record<string, number[][] | null> = {};
  for (const key of args.keys) {
    const got = store.get(
      { collection: companion, branch: args.branch, version: found.companion },
      key,
    );
    // defineProperty: a document named "__proto__" is an own key like any other.
    Object.defineProperty(vectors, key, {
      value: got.found ? decodeVectors(got.value) : null,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { version: found.data, vectors };
}

/** The companion version complete at data `version` of `branch` (default: the latest). */
export function findEmbedded(
  store: Store,
  companion: string,
  branch: string,
  version: number | undefined,
): { companion: number; data: number } | undefined {
  let before: number | undefined;
  for (;;) {
    let page: ReturnType<Store["history"]>;
    try {
      page = store.history(companion, branch, before, 100);
    } catch (error) {
      const code = (error as SkeinError).code;
      if (code === "branch_not_found" || code === "collection_not_found") return undefined;
      throw error;
    }
    for (const row of page.rows) {
      const marker = parseMarker(row.author);
      if (marker === undefined || marker.to !== undefined || marker.branch !== branch) continue;
      if (version === undefined || marker.at === version) {
        return { companion: row.version, data: marker.at };
      }
      if (marker.at < version) return undefined;
    }
    if (page.next === null) return undefined;
    before = page.next;
  }
}

function hasCollection(store: Store, name: string): boolean {
  try {
    store.listBranches(name, undefined, 1);
    return true;
  } catch (error) {
    if ((error as SkeinError).code === "collection_not_found") return false;
    throw error;
  }
}
