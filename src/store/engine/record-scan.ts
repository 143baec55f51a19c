/**
 * An ordered scan of one branch version's records that lives across turns of the event
 * loop (a query reads its records batch by batch while other requests run). It merges the
 * shards' scans into key order like a list does, but hands out the stored JSON text
 * unparsed: a query worker parses it inside its sandbox (search reads the stored items as
 * they are, raw bytes included: `takeItems`). The version's roots are pinned
 * while the scan is open, so a node sweep that starts meanwhile keeps its nodes even if
 * retention releases the version; `close` unpins them.
 */

import { storeError } from "../errors.ts";
import { scan } from "../tree/cursor.ts";
import type { Item } from "../tree/node.ts";
import type { StoreContext } from "./context.ts";
import type { Where } from "./documents.ts";
import { resolveRef } from "./refs.ts";

/** A record as stored: its key and its value's JSON text. */
export type RecordText = readonly [key: string, json: string];
/** A record as stored: its key and its item (JSON text, or raw bytes the store wrote). */
export type RecordItem = readonly [key: string, item: Item];

interface Head {
  key: string;
  item: Item;
  readonly it: Iterator<[string, Item]>;
}

export class RecordScan {
  readonly version: number;
  readonly #ctx: StoreContext;
  readonly #pin: { readonly roots: readonly (string | null)[] };
  readonly #heads: Head[] = [];
  readonly #prefix: string;
  #done = false;

  constructor(
    ctx: StoreContext,
    where: Where,
    options: { after: string | undefined; prefix: string | undefined },
  ) {
    const { version } = resolveRef(ctx, where.collection, where.branch, where.version);
    this.version = version.version;
    this.#ctx = ctx;
    this.#pin = { roots: version.roots };
    ctx.pinnedRoots.add(this.#pin);
    const prefix = options.prefix ?? "";
    this.#prefix = prefix;
    // With a prefix, start at the prefix itself unless the cursor is already past it.
    const fromPrefix = prefix !== "" && (options.after === undefined || options.after < prefix);
    const bound = fromPrefix ? prefix : (options.after ?? null);
    for (let s = 0; s < ctx.shards; s++) {
      const it = scan(ctx.readers[s]!, version.roots[s] ?? null, bound, fromPrefix);
      const first = it.next();
      if (!first.done) this.#heads.push({ key: first.value[0], item: first.value[1], it });
    }
  }

  /**
   * Up to `count` more records in key order, as JSON text; fewer only at the end of the
   * range. A record held as raw bytes has no JSON text: refused (only the store's own
   * collections hold such records, and no client verb can name them).
   */
  take(count: number): RecordText[] {
    const out: RecordText[] = [];
    for (const [key, item] of this.takeItems(count)) {
      if (typeof item !== "string") {
        throw storeError("internal_error", `record ${key} is raw bytes, not JSON`);
      }
      out.push([key, item]);
    }
    return out;
  }

  /** Up to `count` more records in key order, as stored; fewer only at the end of the range. */
  takeItems(count: number): RecordItem[] {
    const out: RecordItem[] = [];
    while (out.length < count) {
      const head = this.#min();
      if (head === undefined) break;
      out.push([head.key, head.item]);
      this.#advance(head);
    }
    return out;
  }

  /** True when no record of the range is left. */
  get exhausted(): boolean {
    return this.#min() === undefined;
  }

  close(): void {
    this.#ctx.pinnedRoots.delete(this.#pin);
  }

  /** The head with the smallest key, if it is still in the prefix's range. */
  #min(): Head | undefined {
    if (this.#done) return undefined;
    const heads = this.#heads;
    let min = -1;
    for (let i = 0; i < heads.length; i++) {
      if (min < 0 || heads[i]!.key < heads[min]!.key) min = i;
    }
    const head = min < 0 ? undefined : heads[min];
    if (head === undefined || !head.key.startsWith(this.#prefix)) {
      // Keys come in order: once one is past the prefix, every later one is.
      this.#done = true;
      return undefined;
    }
    return head;
  }

  #advance(head: Head): void {
    const step = head.it.next();
    if (step.done) this.#heads.splice(this.#heads.indexOf(head), 1);
    else {
      head.key = step.value[0];
      head.item = step.value[1];
    }
  }
}
