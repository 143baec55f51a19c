/**
 * Freeing tree nodes no retained version reaches: mark every node reachable from every
 * branch record (head, previous heads and fork point), every history row and every tag,
 * then delete the rest.
 * Leaves are marked from their parents without being read; only internal nodes are
 * loaded, and a subtree already marked is not walked again.
 *
 * A `NodeSweep` does this in steps of bounded work (nodes loaded while marking, node keys
 * examined while sweeping; each sweep step deletes in its own durable transaction), so
 * the socket server can answer requests between steps. The roots are read when the sweep
 * starts; commits may run between steps and are safe: a commit's tree is made of nodes it
 * writes and nodes reachable from the head it replaced, which was a root. Every node
 * written while a sweep runs is protected from it (`protect`), including a node equal to
 * one that was garbage when the roots were read. A sweep may also start while pipelined
 * commits are in flight (pipeline.ts): it keeps their new nodes the same way. `sweepNodes`
 * runs one sweep to the end at once.
 */

import { children, type TreeNode } from "../tree/node.ts";
import { MissingNodeError } from "../tree/node-store.ts";
import type { NodeGuard, StoreContext } from "./context.ts";

export interface SweepResult {
  readonly nodes_freed: number;
  readonly node_bytes_before: number;
  readonly node_bytes_after: number;
}

export class NodeSweep implements NodeGuard {
  readonly #ctx: StoreContext;
  readonly #marked = new Set<string>();
  /** Roots and internal nodes (above level 1) still to mark. */
  readonly #pending: string[] = [];
  #phase: "mark" | "sweep" | "done" = "mark";
  /** The last node key examined by the sweep phase. */
  #cursor: string | undefined;
  #freed = 0;
  readonly #before: number;
  #after = 0;

  constructor(ctx: StoreContext) {
    this.#ctx = ctx;
    // Pipelined commits not yet durable are missing from the roots read below; their
    // trees are made of their own new nodes (pending until durable, kept here) and nodes
    // the heads they replaced reached, the first of which is a root read below.
    for (const hash of ctx.pipeline.pending.keys()) this.#marked.add(hash);
    const { db } = ctx;
    this.#before = db.nodeBytes().bytes;
    for (const { value } of db.branches.getRange()) {
      for (const version of [value.head, ...value.kept]) this.#addRoots(version.roots);
      // A branch's fork point: its first merge's common ancestor.
      if (value.base !== undefined) this.#addRoots(value.base.roots);
    }
    for (const { value } of db.history.getRange()) this.#addRoots(value.roots);
    for (const { value } of db.tags.getRange()) this.#addRoots(value.version.roots);
    for (const pin of ctx.pinnedRoots) this.#addRoots(pin.roots);
    ctx.sweeps.add(this);
  }

  /** "mark" (walking from the roots), "sweep" (deleting unmarked nodes) or "done". */
  get phase(): "mark" | "sweep" | "done" {
    return this.#phase;
  }

  get result(): SweepResult {
    return {
      nodes_freed: this.#freed,
      node_bytes_before: this.#before,
      node_bytes_after: this.#phase === "done" ? this.#after : this.#ctx.db.nodeBytes().bytes,
    };
  }

  /** Keeps a node written while this sweep runs, whatever the marks say. */
  protect(hash: string): void {
    this.#marked.add(hash);
  }

  /** Stops the sweep where it is (the store is closing or a step failed). */
  abandon(): void {
    this.#phase = "done";
    this.#ctx.sweeps.delete(this);
  }

  /** Does at most `work` units of work; true once the sweep has finished. */
  step(work: number): boolean {
    if (this.#phase === "mark") this.#mark(work);
    else if (this.#phase === "sweep") this.#sweep(work);
    return this.#phase === "done";
  }

  #addRoots(roots: readonly (string | null)[]): void {
    for (const root of roots) if (root !== null) this.#pending.push(root);
  }

  #mark(work: number): void {
    const reader = this.#ctx.readers[0]!;
    const marked = this.#marked;
    for (let done = 0; done < work && this.#pending.length > 0; ) {
      const hash = this.#pending.pop()!;
      if (marked.has(hash)) continue;
      marked.add(hash);
      done++;
      let node: TreeNode;
      try {
        node = reader.load(hash);
      } catch (error) {
        // Freed by another sweep since this one read its roots: it was unreachable then,
        // and whatever below it is still reachable is marked from the roots that reach it.
        if (error instanceof MissingNodeError) continue;
        throw error;
      }
      if (node.level === 1) for (const child of children(node)) marked.add(child);
      else if (node.level > 1) for (const child of children(node)) this.#pending.push(child);
    }
    if (this.#pending.length === 0) this.#phase = "sweep";
  }

  #sweep(work: number): void {
    const { db } = this.#ctx;
    const after = this.#cursor;
    const keys: string[] = [];
    // Ranges start inclusive: skip the key the previous step ended on.
    const limit = after === undefined ? work : work + 1;
    for (const key of db.nodes.getKeys({ start: after, limit })) {
      if (key !== after) keys.push(key);
    }
    const doomed = keys.filter((key) => !this.#marked.has(key));
    if (doomed.length > 0) {
      db.commit(() => {
        for (const key of doomed) db.nodes.removeSync(key);
      });
      this.#freed += doomed.length;
    }
    if (keys.length < work) {
      this.#after = db.nodeBytes().bytes;
      this.#phase = "done";
      this.#ctx.sweeps.delete(this);
      return;
    }
    this.#cursor = keys[keys.length - 1];
  }
}

/** Marks and sweeps at once, in one transaction (in-process callers, tests, benchmarks). */
export function sweepNodes(ctx: StoreContext): SweepResult {
  const sweep = new NodeSweep(ctx);
  while (!sweep.step(Number.POSITIVE_INFINITY));
  return sweep.result;
}
