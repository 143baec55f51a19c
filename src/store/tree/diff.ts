/**
 * The structural diff of two trees, in key order, as values `{key, from, to, type}`. Both
 * sides are stacks of pending pieces (subtrees with their key bounds, or single entries).
 * Equal subtrees on top of both stacks are dropped unread; a piece that lies wholly before
 * the other side's top is all removed (or added); otherwise the higher piece is opened.
 * Content-defined chunking realigns both sides right after each change, so the nodes
 * loaded grow with (changes × depth), not with the tree size. Every node opened counts
 * against a budget; exceeding it throws NodeBudgetExceeded.
 */

import { type Item, sameItem } from "./node.ts";
import type { NodeReader } from "./node-store.ts";

export type ChangeType = "added" | "removed" | "modified";

export interface Change {
  readonly key: string;
  readonly from: Item | undefined;
  readonly to: Item | undefined;
  readonly type: ChangeType;
}

export class NodeBudgetExceeded extends Error {
  readonly budget: number;
  constructor(budget: number) {
    super(`the diff needed more than ${budget} tree nodes`);
    this.name = "NodeBudgetExceeded";
    this.budget = budget;
  }
}

interface Piece {
  /** A subtree's level, or -1 for a single entry. */
  readonly level: number;
  /** Subtree address, or the entry's item. */
  readonly item: Item;
  /** Keys in the piece are > low (null: no lower bound); an entry's low is its key. */
  readonly low: string | null;
  /** Keys in the piece are <= high (null: no upper bound); an entry's high is its key. */
  readonly high: string | null;
}

export class TreeDiff {
  readonly #reader: NodeReader;
  readonly #budget: number;
  readonly #after: string | null;
  readonly #a: Piece[] = [];
  readonly #b: Piece[] = [];
  /** Nodes opened so far. */
  loaded = 0;

  constructor(
    reader: NodeReader,
    from: string | null,
    to: string | null,
    options: { after?: string | null; budget: number },
  ) {
    this.#reader = reader;
    this.#budget = options.budget;
    this.#after = options.after ?? null;
    if (from !== null)
      this.#a.push({ level: Number.MAX_SAFE_INTEGER, item: from, low: null, high: null });
    if (to !== null)
      this.#b.push({ level: Number.MAX_SAFE_INTEGER, item: to, low: null, high: null });
  }

  /** The next change in key order, or undefined when the trees agree from here on. */
  next(): Change | undefined {
    const a = this.#a;
    const b = this.#b;
    for (;;) {
      const x = a[a.length - 1];
      const y = b[b.length - 1];
      if (x === undefined && y === undefined) return undefined;
      if (x !== undefined && y !== undefined && x.level >= 0 && y.level >= 0 && x.item === y.item) {
        a.pop();
        b.pop();
        continue;
      }
      if (x !== undefined && (y === undefined || before(x, y))) {
        if (x.level < 0) {
          a.pop();
          return { key: x.low!, from: x.item, to: undefined, type: "removed" };
        }
        this.#open(a);
        continue;
      }
      if (y !== undefined && (x === undefined || before(y, x))) {
        if (y.level < 0) {
          b.pop();
          return { key: y.low!, from: undefined, to: y.item, type: "added" };
        }
        this.#open(b);
        continue;
      }
      // Both present and overlapping.
      if (x!.level < 0 && y!.level < 0) {
        a.pop();
        b.pop();
        // Raw bytes decoded from two nodes are two objects: compared by content.
        if (!sameItem(x!.item, y!.item)) {
          return { key: x!.low!, from: x!.item, to: y!.item, type: "modified" };
        }
        continue;
      }
      if (x!.level >= y!.level) this.#open(a);
      else this.#open(b);
    }
  }

  #open(stack: Piece[]): void {
    const piece = stack.pop()!;
    if (++this.loaded > this.#budget) throw new NodeBudgetExceeded(this.#budget);
    const node = this.#reader.load(piece.item as string);
    const after = this.#after;
    for (let i = node.keys.length - 1; i >= 0; i--) {
      const key = node.keys[i]!;
      if (after !== null && key <= after) break;
      if (node.level === 0) {
        stack.push({ level: -1, item: node.items[i]!, low: key, high: key });
      } else {
        const low = i === 0 ? piece.low : node.keys[i - 1]!;
        stack.push({ level: node.level - 1, item: node.items[i]!, low, high: key });
      }
    }
  }
}

/** True when every key of `x` is below every key of `y`. */
function before(x: Piece, y: Piece): boolean {
  if (x.high === null) return false;
  if (y.level < 0) return x.high < y.low!;
  return y.low !== null && x.high <= y.low;
}
