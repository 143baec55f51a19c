/**
 * The decision rule (docs/identity.md, "The model"). A request is allowed when some grant of
 * the subject, or of a group it belongs to, at a level at least the action's, covers the
 * resource:
 *
 *   grant on          covers
 *   db/D              D, and every collection, branch and record in D (placed or not)
 *   db/D/c/C          C, its branches and their records, once C (and the branch) is placed
 *   db/D/c/C/b/B      B and its records, once B is placed
 *   db/D/c/C/b/B/p/P  the records of B whose key starts with P, once B is placed
 *
 * Everything else is false: unknown actions, unknown subject or resource types, subjects
 * without grants. A `Decider` lives for one HTTP request and memoizes what it reads (a
 * subject's groups and grants, placements), so a batch of 1,000 records of one branch reads
 * SQLite a handful of times, while a revoke is seen by the very next request.
 */

import type { GrantScope } from "../names.ts";
import type { GrantRow, IdpState } from "../state/state.ts";
import { ACTION_LEVELS } from "./actions.ts";
import type { Target } from "./request.ts";

export interface Question {
  readonly subjectType: string;
  readonly subjectId: string;
  readonly action: string;
  readonly target: Target | undefined;
}

export class Decider {
  readonly #state: IdpState;
  readonly #grants = new Map<string, GrantRow[]>();
  readonly #placed = new Map<string, boolean>();

  constructor(state: IdpState) {
    this.#state = state;
  }

  decide(question: Question): boolean {
    const level = ACTION_LEVELS.get(question.action);
    const { target } = question;
    if (level === undefined || target === undefined) return false;
    if (question.subjectType !== "user" && question.subjectType !== "client") return false;
    const subject = `${question.subjectType}:${question.subjectId}`;
    for (const grant of this.#grantsOf(subject, target.database)) {
      if (grant.level >= level && this.#covers(grant.scope, target)) return true;
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

  #covers(scope: GrantScope, target: Target): boolean {
    // A grant on the database covers everything in it: placement attaches things to D.
    if (scope.collection === undefined) return true;
    if (target.level === "database" || target.collection !== scope.collection) return false;
    if (!this.#isPlaced(target.database, target.collection, undefined)) return false;
    if (target.level === "collection") return scope.branch === undefined;
    if (!this.#isPlaced(target.database, target.collection, target.branch)) return false;
    if (scope.branch === undefined) return true;
    if (target.branch !== scope.branch) return false;
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
