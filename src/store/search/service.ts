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
 *
 * This file is the plan of a search and the background rounds; the vector side is in
 * vector-search.ts, the keyword side in keyword-search.ts.
 */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../../common/log.ts";
import { readBindings } from "../embed/companions.ts";
import { type Binding, modelChange, parseFieldPath } from "../embed/fields.ts";
import type { EmbedService } from "../embed/service.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import { fuseRanks } from "./fuse.ts";
import { admit, headVersion } from "./heads.ts";
import { KeywordSearch } from "./keyword-search.ts";
import { QuestionBatches } from "./questions.ts";
import type { Trace } from "./trace.ts";
import { VectorIndexes } from "./vector-index.ts";
import { vectorHits } from "./vector-search.ts";

export { EMBED_WAIT_MS } from "./vector-search.ts";

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
  /**
   * Rank among the records under `prefix` only (keyword statistics of those records): a
   * caller that may not read the whole branch learns nothing of the others' words.
   */
  readonly isolated?: boolean;
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

/** Each ranking's depth in hybrid mode: the fused top k come from the top HYBRID_DEPTH(k). */
export const hybridDepth = (k: number): number => Math.max(2 * k, 20);
/** Records below which a head is searched exactly and gets no HNSW index. */
export const INDEX_MIN_RECORDS = 1024;
/** Background rounds: how often idle indexes look for new commits. */
const POLL_MS = 200;

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
  readonly #keywords: KeywordSearch;
  readonly #vectors: VectorIndexes;
  readonly #questions: QuestionBatches;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(store: Store, embed: EmbedService, options: SearchOptions, log: Logger) {
    this.#store = store;
    this.#embed = embed;
    this.#questions = new QuestionBatches(embed);
    this.#log = log;
    const dir = join(options.dataDir, "search");
    mkdirSync(dir, { recursive: true });
    this.#keywords = new KeywordSearch(store, join(dir, "keyword.sqlite"), log, options.trace);
    this.#vectors = new VectorIndexes(
      store,
      options.dataDir,
      options.indexMin ?? INDEX_MIN_RECORDS,
      log,
      options.trace,
    );
  }

  /** Starts the background rounds (builds, catching up, checkpoints, dropping). */
  start(): void {
    const round = () => {
      if (this.#stopped) return;
      let worked = false;
      if (!this.#store.busy) {
        worked = this.#vectors.step();
        this.#dropGone();
        if (this.#keywords.step()) worked = true;
      }
      this.#timer = setTimeout(round, worked ? 0 : POLL_MS);
    };
    this.#timer = setTimeout(round, POLL_MS);
  }

  async search(args: SearchArgs): Promise<SearchAnswer> {
    const store = this.#store;
    // The collection before its binding: an unknown one is collection_not_found, as for
    // every other verb, not a missing embedded field.
    store.listBranches(args.collection, undefined, 1);
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
      const changed = modelChange(args.collection, binding, this.#embed.identity);
      if (changed !== undefined) throw changed;
      if (this.#embed.failure !== undefined) throw this.#embed.failure;
      question = await this.#questions.ask(args.text);
      await admit(store);
    }
    const depth = args.mode === "hybrid" ? hybridDepth(args.k) : args.k;
    const vector =
      question === undefined
        ? []
        : await vectorHits(store, this.#vectors, args, version, question, depth);
    // The head may have moved while the question was embedded: an index serves only the
    // version it can be brought to, the head.
    const atHead = !args.exact && version === headVersion(store, args.collection, args.branch);
    const keyword =
      args.mode === "vector" ? [] : this.#keywords.hits(args, binding, version, atHead, depth);
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

  /** The last diff applied to an HNSW index (records, ms): a benchmark's figure. */
  get lastIndexUpdate(): { records: number; ms: number } | undefined {
    return this.#vectors.lastUpdate;
  }

  /** Drops the indexes of branches that no longer exist. */
  #dropGone(): void {
    for (const { collection, branch } of this.#keywords.gone()) this.forget(collection, branch);
  }

  /** Drops the indexes of a deleted branch (or of every branch of a deleted collection). */
  forget(collection: string, branch?: string): void {
    this.#keywords.forget(collection, branch);
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
    const keywords = this.#keywords.stats();
    return {
      keyword_indexes: keywords.indexes,
      keyword_bytes: keywords.bytes,
      vector_indexes: vectors.indexes,
      vector_records: vectors.records,
      vector_bytes: vectors.bytes,
      vector_builds: vectors.builds,
      keyword_builds: keywords.builds,
    };
  }

  /** Stops the background rounds and checkpoints the indexes. */
  async close(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    try {
      await this.#vectors.close();
    } catch (error) {
      this.#log.warn({}, `search index checkpoint at close failed: ${(error as Error).message}`);
    }
    this.#keywords.close();
  }
}
