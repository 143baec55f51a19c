/**
 * The keyword side of the search service: which keyword index answers a search, and how
 * those indexes follow their branches. At the head a search uses the branch's index,
 * caught up from the diff since its version (or rebuilt when there is no usable diff); at
 * a past version, or with `exact`, BM25 runs over that version's texts in a throwaway
 * index. Between requests the background rounds catch the indexes up and drop those of
 * branches that are gone. Each index holds its version from release (`Store.hold`) until
 * it has caught up past it, so retention never forces a rebuild; an index the background
 * cannot catch up (the diff too long) lets go of its hold and waits for a search.
 * It lives apart from service.ts because this bookkeeping (holds, laggards, build counts)
 * is the keyword indexes' own and the vector side shares none of it.
 */

import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { readBindings } from "../embed/companions.ts";
import { type Binding, fieldText, parseFieldPath } from "../embed/fields.ts";
import type { Store } from "../engine/index.ts";
import { readDiff } from "./diff.ts";
import { headVersion } from "./heads.ts";
import { type KeywordHit, type KeywordIndex, KeywordIndexes } from "./keyword.ts";
import { type Trace, traced } from "./trace.ts";
import { dataRecords } from "./vectors.ts";

/** Most changed records a background round applies to a keyword index (more: the next search rebuilds). */
const KEYWORD_BACKGROUND_MOST = 200_000;
/** The holder name of the keyword indexes' versions (`Store.hold`). */
const KEYWORD_HOLDER = "search.keywords";

/** What a keyword search asks: the fields of SearchArgs it reads. */
export interface KeywordQuery {
  readonly collection: string;
  readonly branch: string;
  readonly text: string;
  readonly prefix?: string | undefined;
  /** Statistics of the records under `prefix` only (service.ts's SearchArgs). */
  readonly isolated?: boolean | undefined;
}

export class KeywordSearch {
  readonly #store: Store;
  readonly #log: Logger;
  readonly #trace: Trace | undefined;
  readonly #keywords: KeywordIndexes;
  /** Keyword indexes built whole (not from a diff) since the store opened. */
  #builds = 0;
  /**
   * Keyword indexes the background could not catch up (the diff too long), by id, with the
   * version they were at: they let go of their hold, so retention is not held back, and
   * wait for a search to move them (which holds again).
   */
  readonly #behind = new Map<number, number>();

  constructor(store: Store, file: string, log: Logger, trace: Trace | undefined) {
    this.#store = store;
    this.#log = log;
    this.#trace = trace;
    this.#keywords = new KeywordIndexes(file);
    for (const index of this.#keywords.all()) this.#hold(index);
  }

  #hold(index: KeywordIndex, version: number | undefined = index.version): void {
    this.#store.hold(KEYWORD_HOLDER, index.collection, index.branch, version);
  }

  /** The top `depth` keyword hits at `version`: from the head's index when `atHead`. */
  hits(
    query: KeywordQuery,
    binding: Binding,
    version: number,
    atHead: boolean,
    depth: number,
  ): KeywordHit[] {
    const path = parseFieldPath(binding.field);
    const isolated = query.isolated === true;
    if (atHead && !isolated) {
      const index = this.#at(query, binding, version, path);
      return this.#keywords.search(index, query.text, depth, query.prefix);
    }
    // A past version (or exact): BM25 over that version's texts in a throwaway index. Every
    // record is indexed and the prefix applied after, so the scores are those an index of
    // the version would give (term statistics over the whole branch). Isolated, only the
    // records under the prefix are indexed: no other record's words reach the scores.
    const scratch = new KeywordIndexes(":memory:");
    try {
      const where = { collection: query.collection, branch: query.branch, version };
      const texts = keywordTexts(this.#store, where, path, isolated ? query.prefix : undefined);
      const index = scratch.rebuild(query.collection, query.branch, binding.field, version, texts);
      return scratch.search(index, query.text, depth, query.prefix);
    } finally {
      scratch.close();
    }
  }

  /** The keyword index of the head, caught up from the diff since its version. */
  #at(
    query: KeywordQuery,
    binding: Binding,
    version: number,
    path: (string | number)[],
  ): KeywordIndex {
    const index = this.#keywords.find(query.collection, query.branch);
    const where = { collection: query.collection, branch: query.branch };
    if (index !== undefined && index.field === binding.field && index.version <= version) {
      if (index.version === version) return index;
      const caught = this.#catchUp(index, path, version, Number.POSITIVE_INFINITY);
      if (caught !== undefined) return caught;
    }
    const texts = keywordTexts(this.#store, { ...where, version }, path);
    const event = { index: "keyword" as const, update: "rebuild" as const, ...where };
    const built = traced(this.#trace, event, () =>
      this.#keywords.rebuild(query.collection, query.branch, binding.field, version, texts),
    );
    this.#builds++;
    this.#hold(built);
    return built;
  }

  /** The index moved to `version` by the diff since its version; undefined when there is none. */
  #catchUp(
    index: KeywordIndex,
    path: (string | number)[],
    version: number,
    most: number,
  ): KeywordIndex | undefined {
    const where = { collection: index.collection, branch: index.branch };
    const diff = readDiff(this.#store, where, index.version, version, most);
    if (diff === "gone" || diff === "too_many") return undefined;
    const puts: { key: string; text: string }[] = [];
    const deletes: string[] = [];
    for (const change of diff) {
      const text = change.type === "removed" ? undefined : fieldText(change.to, path);
      if (change.type === "modified" && text === fieldText(change.from, path)) continue;
      if (text === undefined) deletes.push(change.key);
      else puts.push({ key: change.key, text });
    }
    const event = { index: "keyword" as const, update: "catch_up" as const, ...where };
    const caught = traced(this.#trace, { ...event, records: diff.length }, () =>
      this.#keywords.apply(index, { puts, deletes }, version),
    );
    this.#hold(caught);
    return caught;
  }

  /**
   * Catches the keyword indexes up to their heads between requests, so the versions they
   * hold from release trail the heads (a search would catch them up anyway). True if any moved.
   */
  step(): boolean {
    let worked = false;
    const bindings = readBindings(this.#store);
    for (const index of this.#keywords.all()) {
      const binding = bindings.get(index.collection);
      if (binding === undefined || binding.field !== index.field) continue;
      if (this.#behind.get(index.id) === index.version) continue;
      try {
        const head = headVersion(this.#store, index.collection, index.branch);
        if (head === index.version) continue;
        const path = parseFieldPath(binding.field);
        if (this.#catchUp(index, path, head, KEYWORD_BACKGROUND_MOST)) worked = true;
        else {
          this.#behind.set(index.id, index.version);
          this.#hold(index, undefined);
        }
      } catch (error) {
        // A branch deleted meanwhile is dropped with the gone branches; anything else waits for a search.
        this.#log.debug(
          { collection: index.collection, branch: index.branch },
          `keyword index: ${(error as Error).message}`,
        );
      }
    }
    return worked;
  }

  /** The branches whose keyword indexes outlived them (the service forgets their indexes). */
  gone(): { collection: string; branch: string }[] {
    const gone: { collection: string; branch: string }[] = [];
    for (const index of this.#keywords.all()) {
      try {
        this.#store.history(index.collection, index.branch, undefined, 1);
      } catch (error) {
        const code = (error as SkeinError).code;
        if (code === "branch_not_found" || code === "collection_not_found") {
          gone.push({ collection: index.collection, branch: index.branch });
        }
      }
    }
    return gone;
  }

  /** Drops the indexes of a deleted branch (or of every branch of a deleted collection). */
  forget(collection: string, branch?: string): void {
    for (const index of this.#keywords.all()) {
      if (index.collection === collection && (branch === undefined || index.branch === branch))
        this.#hold(index, undefined);
    }
    this.#keywords.drop(collection, branch);
  }

  stats(): { indexes: number; bytes: number; builds: number } {
    return {
      indexes: this.#keywords.all().length,
      bytes: this.#keywords.bytes(),
      builds: this.#builds,
    };
  }

  close(): void {
    this.#keywords.close();
  }
}

function* keywordTexts(
  store: Store,
  where: { collection: string; branch: string; version: number },
  path: (string | number)[],
  prefix?: string,
): Generator<{ key: string; text: string }> {
  for (const { key, value } of dataRecords(store, where, prefix)) {
    const text = fieldText(value, path);
    if (text !== undefined) yield { key, text };
  }
}
