/**
 * The decision rule (docs/identity.md, "The model"). A request is allowed when some grant of
 * the subject, or of a group it belongs to, at a level at least the action's, covers the
 * resource:
 *
 *   grant on          covers
 *   db/D              D, and every collection, branch and record in D (placed or not)
 *   db/D/c/C          C, its branches and their records, once C (and the branch) is placed
 *   db/D/c/C/b/B      B and its records, once B is placed
 *   db/D/c/C/b/B*     every branch whose name starts with B, and its records, once placed
 *   db/D/c/C/b/B/p/P  the records of B whose key starts with P, once B is placed
 *
 * Creating a branch (`branches.create`, asked on the new branch) is decided as if the branch
 * were placed: it cannot be yet, and the store places it once allowed. So a grant that will
 * cover a branch lets its holder make it, and nothing above it.
 *
 * Everything else is false: unknown actions, unknown subject or resource types, subjects
 * without grants. A `Decider` memoizes what it reads (a subject's groups and grants,
 * placements) in a `DecisionReads`, which outlives the request while the SQLite file is
 * unchanged (`IdpState.changeMark`, one `PRAGMA data_version` per request) and is emptied as
 * soon as anything changes: a batch of 1,000 records reads SQLite a handful of times at most,
 * repeated questions not at all, and a revoke is still seen by the very next request.
 */

import { branchCovers, type GrantScope } from "../names.ts";
import type { GrantRow, IdpState } from "../state/state.ts";
import { ACTION_LEVELS } from "./actions.ts";
import type { Target } from "./request.ts";

export interface Question {
  readonly subjectType: string;
  readonly subjectId: string;
  readonly action: string;
  readonly target: Target | undefined;
}

/** Most entries a DecisionReads holds before it starts over (a bound on its memory). */
export const DECISION_READS_MAX = 10_000;

/** Reads made under one change mark of the state. */
export class DecisionReads {
  readonly grants = new Map<string, GrantRow[]>();
  readonly placed = new Map<string, boolean>();
  #mark = "";

  /** Empties itself when the state changed since the last request (or it is full). */
  refresh(state: IdpState): this {
    const mark = state.changeMark();
    if (mark !== this.#mark || this.grants.size + this.placed.size > DECISION_READS_MAX) {
      this.grants.clear();
      this.placed.clear();
      this.#mark = mark;
    }
    return this;
  }
}

export class Decider {
  readonly #state: IdpState;
  readonly #grants: Map<string, GrantRow[]>;
  readonly #placed: Map<string, boolean>;

  /** `reads`: memoized reads to use, refreshed for this request (default: this request's own). */
  constructor(state: IdpState, reads: DecisionReads = new DecisionReads()) {
    this.#state = state;
    reads.refresh(state);
    this.#grants = reads.grants;
    this.#placed = reads.placed;
  }

  decide(question: Question): boolean {
    const level = ACTION_LEVELS.get(question.action);
    const { target } = question;
    if (level === undefined || target === undefined) return false;
    if (question.subjectType !== "user" && question.subjectType !== "client") return false;
    const subject = `${question.subjectType}:${question.subjectId}`;
    const creating = question.action === "branches.create";
    for (const grant of this.#grantsOf(subject, target.database)) {
      if (grant.level >= level && this.#covers(grant.scope, target, creating)) return true;
    }
    return false;
  }

  #grantsOf(subject: string, database: string): GrantRow[] {
    const key = `${subject}\u0000${database}`;
    let grants = this.#grants.get(key);
    if (grants === undefined) {
      const principals = [subject, ...this.#state.groupsOf(subject).map((g) => `group:${g}`)];
      grants = this.#state.grantsIn(principals, database);
      this.#grants.set(key, grants);
    }
    return grants;
  }

  #covers(scope: GrantScope, target: Target, creating: boolean): boolean {
    // A grant on the database covers everything in it: placement attaches things to D.
    if (scope.collection === undefined) return true;
    if (target.level === "database" || target.collection !== scope.collection) return false;
    if (!this.#isPlaced(target.database, target.collection, undefined)) return false;
    if (target.level === "collection") return scope.branch === undefined;
    const placed =
      (creating && target.level === "branch") ||
      this.#isPlaced(target.database, target.collection, target.branch);
    if (!placed) return false;
    if (scope.branch === undefined) return true;
    if (!branchCovers(scope.branch, target.branch)) return false;
    if (scope.prefix === undefined) return true;
    return target.level === "record" && target.key.startsWith(scope.prefix);
  }

  #isPlaced(database: string, collection: string, branch: string | undefined): boolean {
    const key = `${database}\u0000${collection}\u0000${branch ?? ""}`;
    let placed = this.#placed.get(key);
    if (placed === undefined) {
      placed = this.#state.isPlaced(database, collection, branch);
      this.#placed.set(key, placed);
    }
    return placed;
  }
}
