/**
 * The store's search service (`search.text`): vector, keyword and hybrid search over the
 * embedded field of a collection, at any retained version of a branch. The question is
 * embedded by the question worker; vectors come from the companion collection the
 * embedding walk keeps (embed/), keywords from the field's text in the data.
 *
 * - At the branch head: the HNSW index (vector-index.ts) when the branch has enough
 *   records and the index is at, or within a small diff of, the head; else exact search.
 *   The keyword index (keyword.ts) is caught up from the diff since its version, in the
 *   request (and in the background rounds). So results always reflect the version asked for.
 * - At a past version, with a prefix (vectors) or with `exact`: exact search over the
 *   stored vectors of that version; at a past version or with `exact`, BM25 over that
 *   version's texts in a throwaway index.
 * - Vectors of the version asked for that the walk has not written yet are waited for at
 *   most `EMBED_WAIT_MS`, then refused (`embed_version_not_embedded`).
 *
 * Indexes are derived data under `DATA_DIR/search/`: dropped with their branch or
 * collection, rebuilt when their files are damaged, caught up after a crash. Each holds its
 * version from release (`Store.hold`) until it has caught up past it, so retention never
 * forces a rebuild.
 */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { type Binding, companionOf, fieldText, parseFieldPath } from "../embed/fields.ts";
import type { EmbedService } from "../embed/service.ts";
import { findEmbedded } from "../embed/verbs.ts";
import { companionMarker, readBindings } from "../embed/walk.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import { readDiff } from "./diff.ts";
import { exactSearch, type VectorHit } from "./exact.ts";
import { fuseRanks } from "./fuse.ts";
import { type KeywordHit, type KeywordIndex, KeywordIndexes } from "./keyword.ts";
import { QuestionBatches } from "./questions.ts";
import { type Trace, traced } from "./trace.ts";
import { embeddedHead, VectorIndexes } from "./vector-index.ts";
import { companionRecords, dataRecords } from "./vectors.ts";

export type SearchMode = "vector" | "keyword" | "hybrid";

export interface SearchArgs {
  readonly collection: string;
  readonly branch: string;
  readonly version?: number | undefined;
  readonly field: string;
  readonly text: string;
  readonly k: number;
  readonly mode: SearchMode;
  readonly prefix?: string | undefined;
  readonly exact: boolean;
  readonly values: boolean;
}

export interface SearchRow {
  readonly key: string;
  readonly score: number;
  readonly window?: number;
  readonly value?: unknown;
}

export interface SearchAnswer {
  readonly rows: SearchRow[];
  readonly version: number;
  readonly mode: SearchMode;
}

/** How long a search waits for the walk to embed the version it asks for. */
export const EMBED_WAIT_MS = 10_000;
/** Each ranking's depth in hybrid mode: the fused top k come from the top HYBRID_DEPTH(k). */
export const hybridDepth = (k: number): number => Math.max(2 * k, 20);
/** Records below which a head is searched exactly and gets no HNSW index. */
export const INDEX_MIN_RECORDS = 1024;
/** Background rounds: how often idle indexes look for new commits. */
const POLL_MS = 200;
/** Most changed records a background round applies to a keyword index (more: the next search rebuilds). */
const KEYWORD_BACKGROUND_MOST = 200_000;
/** The holder name of the keyword indexes' versions (`Store.hold`). */
const KEYWORD_HOLDER = "search.keywords";

export interface SearchOptions {
  readonly dataDir: string;
  readonly indexMin?: number;
  /** Trace lines of index updates (trace.ts), when SKEIN_SEARCH_TRACE=1. */
  readonly trace?: Trace | undefined;
}

export class SearchService {
  readonly #store: Store;
  readonly #embed: EmbedService;
  readonly #log: Logger;
  readonly #keywords: KeywordIndexes;
  readonly #vectors: VectorIndexes;
  readonly #questions: QuestionBatches;
  readonly #trace: Trace | undefined;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  /** Keyword indexes built whole (not from a diff) since the store opened. */
  #keywordBuilds = 0;
  /**
   * Keyword indexes the background could not catch up (the diff too long), by id, with the
   * version they were at: they let go of their hold, so retention is not held back, and
   * wait for a search to move them (which holds again).
   */
  readonly #keywordsBehind = new Map<number, number>();

  constructor(store: Store, embed: EmbedService, options: SearchOptions, log: Logger) {
    this.#store = store;
    this.#embed = embed;
    this.#questions = new QuestionBatches(embed);
    this.#log = log;
    this.#trace = options.trace;
    const dir = join(options.dataDir, "search");
    mkdirSync(dir, { recursive: true });
    this.#keywords = new KeywordIndexes(join(dir, "keyword.sqlite"));
    this.#vectors = new VectorIndexes(
      store,
      options.dataDir,
      options.indexMin ?? INDEX_MIN_RECORDS,
      log,
      options.trace,
    );
    for (const index of this.#keywords.all()) this.#holdKeywords(index);
  }

  #holdKeywords(index: KeywordIndex, version: number | undefined = index.version): void {
    this.#store.hold(KEYWORD_HOLDER, index.collection, index.branch, version);
  }

  /** Starts the background rounds (builds, catching up, checkpoints, dropping). */
  start(): void {
    const round = () => {
      if (this.#stopped) return;
      let worked = false;
      if (!this.#store.busy) {
        worked = this.#vectors.step(this.#store);
        this.#dropGone();
        if (this.#stepKeywords()) worked = true;
      }
      this.#timer = setTimeout(round, worked ? 0 : POLL_MS);
    };
    this.#timer = setTimeout(round, POLL_MS);
  }

  async search(args: SearchArgs): Promise<SearchAnswer> {
    const store = this.#store;
    const binding = this.#binding(args.collection, args.field);
    const head = headVersion(store, args.collection, args.branch);
    const version = args.version ?? head;
    if (version > head) {
      throw storeError("version_not_found", `${args.branch} has no version ${version}`);
    }
    // Resolving the version refuses one the branch does not retain (version_not_found).
    store.scanRecords({ collection: args.collection, branch: args.branch, version }).close();
    let question: Float32Array | undefined;
    if (args.mode !== "keyword") {
      if (this.#embed.failure !== undefined) throw this.#embed.failure;
      question = await this.#questions.ask(args.text);
      await admit(store);
    }
    const depth = args.mode === "hybrid" ? hybridDepth(args.k) : args.k;
    const vector =
      question === undefined ? [] : await this.#vectorHits(args, version, question, depth);
    // The head may have moved while the question was embedded: an index serves only the
    // version it can be brought to, the head.
    const atHead = !args.exact && version === headVersion(store, args.collection, args.branch);
    const keyword =
      args.mode === "vector" ? [] : this.#keywordHits(args, binding, version, atHead, depth);
    const ranked: { key: string; score: number; window?: number }[] =
      args.mode === "vector"
        ? vector
        : args.mode === "keyword"
          ? keyword
          : fuseRanks([vector, keyword], args.k);
    const where = { collection: args.collection, branch: args.branch, version };
    const rows = ranked.map((hit) =>
      args.values ? { ...hit, value: store.get(where, hit.key).value } : hit,
    );
    return { rows, version, mode: args.mode };
  }

  #binding(collection: string, field: string): Binding {
    const binding = readBindings(this.#store).get(collection);
    if (binding === undefined) {
      throw storeError("embed_field_not_found", `${collection} has no embedded field`);
    }
    if (JSON.stringify(parseFieldPath(field)) !== JSON.stringify(parseFieldPath(binding.field))) {
      throw storeError(
        "embed_field_not_found",
        `${collection} embeds ${JSON.stringify(binding.field)}, not ${JSON.stringify(field)}`,
      );
    }
    return binding;
  }

  async #vectorHits(
    args: SearchArgs,
    version: number,
    question: Float32Array,
    depth: number,
  ): Promise<VectorHit[]> {
    const store = this.#store;
    const found = await this.#embedded(args.collection, args.branch, version);
    const atHead =
      !args.exact &&
      args.prefix === undefined &&
      version === headVersion(store, args.collection, args.branch);
    if (atHead) {
      const head = embeddedHead(store, args.collection, args.branch);
      const records = head?.companion === found.companion ? head.count : 0;
      const index = this.#vectors.at(store, args.collection, args.branch, found.companion, records);
      if (index !== undefined) return index.search(question, depth);
    }
    const where = {
      collection: companionOf(args.collection),
      branch: args.branch,
      version: found.companion,
    };
    return exactSearch(question, companionRecords(store, where, args.prefix), depth);
  }

  /** The companion version of `version`'s vectors, waiting for the walk if it is behind. */
  async #embedded(
    collection: string,
    branch: string,
    version: number,
  ): Promise<{ companion: number; data: number }> {
    const store = this.#store;
    const companion = companionOf(collection);
    const deadline = performance.now() + EMBED_WAIT_MS;
    for (;;) {
      // Most searches are at the head, whose vectors are the companion's head: one row.
      const head = embeddedHead(store, collection, branch);
      if (head?.data === version) return head;
      const found = findEmbedded(store, companion, branch, version);
      if (found !== undefined) return found;
      const marker = companionMarker(store, companion, branch);
      const past = marker !== undefined && marker.branch === branch && marker.at > version;
      if (past || performance.now() >= deadline) {
        throw storeError(
          "embed_version_not_embedded",
          past
            ? `${collection}/${branch} keeps no vectors of version ${version}`
            : `${collection}/${branch}: the walk has not embedded version ${version} within ${EMBED_WAIT_MS} ms (it is at ${marker?.branch === branch ? marker.at : "none"})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
      await admit(store);
    }
  }

  #keywordHits(
    args: SearchArgs,
    binding: Binding,
    version: number,
    atHead: boolean,
    depth: number,
  ): KeywordHit[] {
    const path = parseFieldPath(binding.field);
    if (atHead) {
      const index = this.#keywordAt(args, binding, version, path);
      return this.#keywords.search(index, args.text, depth, args.prefix);
    }
    // A past version (or exact): BM25 over that version's texts in a throwaway index. Every
    // record is indexed and the prefix applied after, so the scores are those an index of
    // the version would give (term statistics over the whole branch).
    const scratch = new KeywordIndexes(":memory:");
    try {
      const texts = keywordTexts(this.#store, { ...args, version }, path);
      const index = scratch.rebuild(args.collection, args.branch, binding.field, version, texts);
      return scratch.search(index, args.text, depth, args.prefix);
    } finally {
      scratch.close();
    }
  }

  /** The keyword index of the head, caught up from the diff since its version. */
  #keywordAt(
    args: SearchArgs,
    binding: Binding,
    version: number,
    path: (string | number)[],
  ): KeywordIndex {
    const index = this.#keywords.find(args.collection, args.branch);
    const where = { collection: args.collection, branch: args.branch };
    if (index !== undefined && index.field === binding.field && index.version <= version) {
      if (index.version === version) return index;
      const caught = this.#catchUpKeywords(index, path, version, Number.POSITIVE_INFINITY);
      if (caught !== undefined) return caught;
    }
    const texts = keywordTexts(this.#store, { ...where, version }, path);
    const event = { index: "keyword" as const, update: "rebuild" as const, ...where };
    const built = traced(this.#trace, event, () =>
      this.#keywords.rebuild(args.collection, args.branch, binding.field, version, texts),
    );
    this.#keywordBuilds++;
    this.#holdKeywords(built);
    return built;
  }

  /** The index moved to `version` by the diff since its version; undefined when there is none. */
  #catchUpKeywords(
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
    this.#holdKeywords(caught);
    return caught;
  }

  /**
   * Catches the keyword indexes up to their heads between requests, so the versions they
   * hold from release trail the heads (a search would catch them up anyway). True if any moved.
   */
  #stepKeywords(): boolean {
    let worked = false;
    const bindings = readBindings(this.#store);
    for (const index of this.#keywords.all()) {
      const binding = bindings.get(index.collection);
      if (binding === undefined || binding.field !== index.field) continue;
      if (this.#keywordsBehind.get(index.id) === index.version) continue;
      try {
        const head = headVersion(this.#store, index.collection, index.branch);
        if (head === index.version) continue;
        const path = parseFieldPath(binding.field);
        if (this.#catchUpKeywords(index, path, head, KEYWORD_BACKGROUND_MOST)) worked = true;
        else {
          this.#keywordsBehind.set(index.id, index.version);
          this.#holdKeywords(index, undefined);
        }
      } catch (error) {
        // A branch deleted meanwhile is dropped by #dropGone; anything else waits for a search.
        this.#log.debug(
          { collection: index.collection, branch: index.branch },
          `keyword index: ${(error as Error).message}`,
        );
      }
    }
    return worked;
  }

  /** The last diff applied to an HNSW index (records, ms): a benchmark's figure. */
  get lastIndexUpdate(): { records: number; ms: number } | undefined {
    return this.#vectors.lastUpdate;
  }

  /** Drops the keyword indexes of branches that no longer exist. */
  #dropGone(): void {
    for (const index of this.#keywords.all()) {
      try {
        this.#store.history(index.collection, index.branch, undefined, 1);
      } catch (error) {
        const code = (error as SkeinError).code;
        if (code === "branch_not_found" || code === "collection_not_found") {
          this.forget(index.collection, index.branch);
        }
      }
    }
  }

  /** Drops the indexes of a deleted branch (or of every branch of a deleted collection). */
  forget(collection: string, branch?: string): void {
    for (const index of this.#keywords.all()) {
      if (index.collection === collection && (branch === undefined || index.branch === branch))
        this.#holdKeywords(index, undefined);
    }
    this.#keywords.drop(collection, branch);
    this.#vectors.forget(collection, branch);
  }

  stats(): {
    keyword_indexes: number;
    keyword_bytes: number;
    vector_indexes: number;
    vector_records: number;
    vector_bytes: number;
    vector_builds: number;
    keyword_builds: number;
  } {
    const vectors = this.#vectors.stats();
    return {
      keyword_indexes: this.#keywords.all().length,
      keyword_bytes: this.#keywords.bytes(),
      vector_indexes: vectors.indexes,
      vector_records: vectors.records,
      vector_bytes: vectors.bytes,
      vector_builds: vectors.builds,
      keyword_builds: this.#keywordBuilds,
    };
  }

  /** Stops the background rounds and checkpoints the indexes. */
  close(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    try {
      this.#vectors.close();
    } catch (error) {
      this.#log.warn({}, `search index checkpoint at close failed: ${(error as Error).message}`);
    }
    this.#keywords.close();
  }
}

function* keywordTexts(
  store: Store,
  where: { collection: string; branch: string; version: number },
  path: (string | number)[],
): Generator<{ key: string; text: string }> {
  for (const { key, value } of dataRecords(store, where)) {
    const text = fieldText(value, path);
    if (text !== undefined) yield { key, text };
  }
}

function headVersion(store: Store, collection: string, branch: string): number {
  return store.history(collection, branch, undefined, 1).rows[0]!.version;
}

/** Waits until no pipelined commit is in flight (reads need an idle pipeline). */
async function admit(store: Store): Promise<void> {
  while (store.busy) await store.idle();
}
