/**
 * The embedding walk: a background loop that keeps every embedded field's vectors in step
 * with its data, branch by branch, one page (`embed_page_records` records) at a time, so
 * the store's requests are served between pages. For each data branch the companion
 * branch (fields.ts) is brought from the data version its marker names to the next
 * retained version: by diffing the two (changes.list's diff, also across branches, so a
 * branch made from another starts from the other's vectors and, when made at a version
 * already embedded, shares them at no cost), or, when the older side is no longer
 * retained or the diff exceeds its node budget, by listing the version and merging it with
 * the companion. Every page is one synchronous commit that carries the new marker, so a
 * walk killed at any point resumes at the page it was on: nothing before it is embedded
 * again and nothing is missed.
 *
 * Reads and commits need the store's pipeline idle; the walk waits for it at most
 * `embed_writer_wait_ms` (else the page is deferred to a later round, and logged). From
 * reading a page to committing it the walk holds the data branch (writer-gate.ts): the
 * page is one embedding commit, and foreground commits to that branch wait for it at most
 * `embed_writer_wait_ms` before they are refused `embed_admission_wait_exceeded`.
 */

import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import type { Store } from "../engine/index.ts";
import {
  companionMarker,
  emptyMarker,
  encodeVectors,
  MAIN,
  readBindings,
  SCAN_PAGE,
} from "./companions.ts";
import type { Embedder } from "./embedder.ts";
import { type Binding, companionOf, type Marker, markerAuthor, modelChange } from "./fields.ts";
import { nextTarget, readPage, type Work } from "./pass-page.ts";

/** How long an idle walk sleeps before looking for new commits again. */
export const WALK_POLL_MS = 100;

/** A page read and sent to the worker: the page after `marker` of one branch. */
interface Ahead {
  readonly marker: Marker;
  readonly work: Work;
  /** The marker after the page. */
  readonly next: Marker;
  readonly vectors: Promise<Map<string, Uint8Array>>;
}

function aheadKey(collection: string, branch: string): string {
  return `${collection}\u0000${branch}`;
}

export class EmbedWalker {
  readonly #store: Store;
  readonly #service: Embedder;
  readonly #log: Logger;
  readonly #errors = new Map<string, SkeinError>();
  /** Per branch walked (collection NUL branch), the next page of its pass, with the worker. */
  readonly #ahead = new Map<string, Ahead>();
  #stopped = false;
  #wake: (() => void) | undefined;
  #running: Promise<void> | undefined;
  /** Records refused per collection since start (a statistic for embed.status). */
  readonly refused = new Map<string, number>();

  constructor(store: Store, service: Embedder, log: Logger) {
    this.#store = store;
    this.#service = service;
    this.#log = log;
  }

  start(): void {
    this.#running = this.#loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
  }

  /** Looks for work at once (after embed.enable). */
  wake(): void {
    this.#wake?.();
  }

  /** The last failure of the collection's walk, if its last round failed. */
  error(collection: string): SkeinError | undefined {
    return this.#errors.get(collection);
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      let worked = false;
      try {
        worked = await this.#round();
      } catch (error) {
        this.#log.warn(
          { code: (error as SkeinError).code },
          `embedding walk: ${(error as Error).message}`,
        );
      }
      if (!worked && !this.#stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, WALK_POLL_MS);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  }

  /** One page of each branch of each embedded collection; true if anything was done. */
  async #round(): Promise<boolean> {
    if (!(await this.#admit())) return false;
    let worked = false;
    const visited = new Set<string>();
    for (const [collection, binding] of readBindings(this.#store)) {
      const changed = modelChange(collection, binding, this.#service.identity);
      if (changed !== undefined) {
        this.#errors.set(collection, changed);
        continue;
      }
      let branches: string[];
      try {
        branches = await this.#branches(collection);
      } catch (error) {
        // The data collection was deleted: nothing to walk.
        if ((error as SkeinError).code === "collection_not_found") continue;
        throw error;
      }
      for (const branch of branches) {
        if (this.#stopped) return worked;
        visited.add(aheadKey(collection, branch));
        try {
          if (await this.#step(collection, binding, branch)) worked = true;
          this.#errors.delete(collection);
        } catch (error) {
          const coded = error as SkeinError;
          this.#errors.set(collection, coded);
          this.#log.warn(
            { collection, branch, code: coded.code },
            `embedding walk: ${coded.message}`,
          );
        }
      }
    }
    // Pages read ahead for branches (or collections) gone since, or no longer walked.
    for (const key of this.#ahead.keys()) if (!visited.has(key)) this.#ahead.delete(key);
    return worked;
  }

  async #branches(collection: string): Promise<string[]> {
    if (!(await this.#admit())) return [];
    const names: string[] = [];
    let after: string | undefined;
    do {
      const page = this.#store.listBranches(collection, after, SCAN_PAGE);
      names.push(...page.rows.map((r) => r.name));
      after = page.next ?? undefined;
    } while (after !== undefined);
    return names;
  }

  /**
   * Waits for the pipeline to be idle, at most embed_writer_wait_ms; false (logged) when it
   * stayed busy. Yields a turn first, so foreground commits released by the last page's
   * commit go ahead of the next page.
   */
  async #admit(): Promise<boolean> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const waitMs = Number(this.#service.settings.embed_writer_wait_ms);
    const deadline = performance.now() + waitMs;
    while (this.#store.busy) {
      const left = deadline - performance.now();
      if (left <= 0) {
        this.#log.info(
          { wait_ms: waitMs },
          "embedding walk deferred: the store's writer stayed busy for embed_writer_wait_ms",
        );
        return false;
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.#store.idle(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, left);
        }),
      ]);
      clearTimeout(timer);
    }
    return true;
  }

  /** One page of one branch, holding the branch from its read to its commit. */
  async #step(collection: string, binding: Binding, branch: string): Promise<boolean> {
    if (!(await this.#admit())) return false;
    const release = this.#service.gate.hold(collection, branch);
    try {
      return await this.#page(collection, binding, branch);
    } finally {
      release();
    }
  }

  /** One page of one branch; false when the branch is up to date (or deferred). */
  async #page(collection: string, binding: Binding, branch: string): Promise<boolean> {
    const store = this.#store;
    const companion = companionOf(collection);
    let marker = companionMarker(store, companion, branch);
    if (marker === undefined) {
      // A new data branch starts from main's vectors: an O(1) branch of the companion,
      // once main's companion is between passes (a pass under way is no state to copy).
      marker = companionMarker(store, companion, MAIN) ?? emptyMarker();
      if (marker.to !== undefined) return false;
      // The data branch may be gone since the round listed it: then no companion either.
      store.history(collection, branch, undefined, 1);
      store.createBranch(companion, branch, { branch: MAIN, version: undefined });
    }
    if (marker.to === undefined) {
      const target = nextTarget(store, collection, branch, marker);
      if (target === undefined) return false;
      marker = { ...marker, to: target };
    }
    const page =
      this.#takeAhead(collection, branch, marker) ??
      this.#read(collection, binding, branch, marker);
    const vectors = await page.vectors;
    if (!(await this.#admit())) {
      this.#ahead.set(aheadKey(collection, branch), page);
      return false;
    }
    const { work, next } = page;
    // The next page of the pass is read and sent to the worker before this one commits,
    // so the worker embeds it while the commit runs.
    // A read that fails is left to the next page, which reads again and reports it.
    if (next.to !== undefined) {
      try {
        this.#ahead.set(
          aheadKey(collection, branch),
          this.#read(collection, binding, branch, next),
        );
      } catch {
        // Nothing read ahead.
      }
    }
    this.#commit(companion, branch, work, vectors, next);
    if (work.refused > 0) {
      this.refused.set(collection, (this.refused.get(collection) ?? 0) + work.refused);
    }
    return true;
  }

  /**
   * The page after `marker`, its texts sent to the worker. Reading needs the pipeline idle
   * (the caller was just admitted). A pass reads one data version, which no commit changes,
   * and a page's companion reads are of its own key range, which the commit of the page
   * before does not touch: a page read before that commit is the page read after it.
   */
  #read(collection: string, binding: Binding, branch: string, marker: Marker): Ahead {
    const work: Work = { puts: [], deletes: [], refused: 0 };
    const limit = Number(this.#service.settings.embed_page_records);
    const next = readPage(this.#store, limit, collection, binding, branch, marker, work);
    const vectors = this.#embed(work);
    // Awaited by the page that takes it; one dropped (the branch moved on) fails unseen.
    vectors.catch(() => {});
    return { marker, work, next, vectors };
  }

  /** The page read ahead, if it is the one after `marker` of that branch; dropped otherwise. */
  #takeAhead(collection: string, branch: string, marker: Marker): Ahead | undefined {
    const key = aheadKey(collection, branch);
    const ahead = this.#ahead.get(key);
    this.#ahead.delete(key);
    if (ahead === undefined) return undefined;
    const same = (a: Marker, b: Marker) =>
      a.at === b.at &&
      a.branch === b.branch &&
      a.to === b.to &&
      a.cursor === b.cursor &&
      a.after === b.after;
    return same(ahead.marker, marker) ? ahead : undefined;
  }

  /** The texts' vectors, in requests of at most embed_request_items texts. */
  async #embed(work: Work): Promise<Map<string, Uint8Array>> {
    const s = this.#service.settings;
    const inputBytes = Number(s.embed_input_bytes);
    const fits = work.puts.filter((p) => Buffer.byteLength(p.value as string) <= inputBytes);
    const tooLong = work.puts.filter((p) => !fits.includes(p));
    const vectors = new Map<string, Uint8Array>();
    const size = Number(s.embed_request_items);
    for (let at = 0; at < fits.length; at += size) {
      const chunk = fits.slice(at, at + size);
      const results = await this.#service.embed(
        "document",
        chunk.map((p) => p.value as string),
      );
      results.forEach((result, i) => {
        const key = chunk[i]!.key;
        if (!result.ok) {
          work.refused++;
          work.deletes.push(key);
          return;
        }
        vectors.set(key, encodeVectors(result.windows));
      });
    }
    work.refused += tooLong.length;
    work.deletes.push(...tooLong.map((p) => p.key));
    return vectors;
  }

  /** One page's edits and the new marker, committed at once (synchronously). */
  #commit(
    companion: string,
    branch: string,
    work: Work,
    vectors: Map<string, Uint8Array>,
    next: Marker,
  ): void {
    const store = this.#store;
    const where = { collection: companion, branch };
    let count = companionMarker(store, companion, branch)?.count ?? 0;
    const deletes = work.deletes.filter((key) => store.get(where, key).found);
    // Raw bytes (companions.ts's stored form): no JSON, no base64.
    const bytes = [...vectors];
    for (const [key] of bytes) if (!store.get(where, key).found) count++;
    count -= deletes.length;
    // One commit, even when empty (it moves the marker): the page's vectors and its end
    // marker become durable together. Deletes and puts in two commits let a SIGKILL land
    // between them, leaving a head whose marker said the page was done without its puts:
    // records with text and no vectors, never embedded again.
    store.edit(where, { puts: [], bytes, deletes }, markerAuthor({ ...next, count }));
  }
}
