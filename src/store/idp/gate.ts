/**
 * The store's policy enforcement point: what the socket server asks before and after each
 * act when the store has `idp`. `verify` turns hello's pass into a principal; `admit` decides
 * an act (by the table in acts.ts) and, for a creating verb with placement, places what it
 * will create; the admission it returns says what to do with the verb's answer (leave denied
 * rows out of a page and count them, undo a placement the create did not use, remove the
 * placement of what a delete removed, seal the position a filtered page continues from).
 * Everything fails closed: no decision is an `idp_unavailable` refusal, never an allowed act.
 */

import { storeError } from "../errors.ts";
import {
  ACTS,
  type Act,
  type ActArgs,
  branchResource,
  collectionResource,
  READ_ACTION,
  type Resource,
} from "./acts.ts";
import type { Evaluator, Question } from "./evaluation.ts";
import { fillNamePage, type NamePage } from "./name-pages.ts";
import type { PassVerifier, Principal } from "./passes.ts";
import type { Placement } from "./placement.ts";
import { type Opened, PagePositions } from "./positions.ts";

/** Runs the verb again in the store's queue, with other raw args: a page's continuation. */
export type Again = (args: Record<string, unknown>) => Promise<unknown>;

/** What to do with the verb's answer once it ran. */
export interface Admission {
  /** Rewrites a successful result (a page without its denied rows); may reject with a refusal. */
  readonly onResult?: (result: unknown, again: Again) => Promise<unknown>;
  /** Runs before a refusal of the verb is sent (undoes a placement made for it). */
  readonly onRefusal?: () => Promise<void>;
  /** The caller may not read the whole branch: a search ranks within its scope only. */
  readonly isolated?: boolean;
}

/** The request as it came, and whether it chose its own position (positions.ts). */
export interface Sent {
  /** The raw args, as sent: what a sealed position is bound to. */
  readonly raw: unknown;
  readonly chosen: boolean;
  /** Rows denied before a name list's sealed position (positions.ts). */
  readonly carried: number;
}

const NOTHING: Admission = {};

export interface IdpGateParts {
  readonly database: string;
  readonly verifier: PassVerifier;
  readonly evaluator: Evaluator;
  /** null without `idp.placement_credential_file`: no automatic placement. */
  readonly placement: Placement | null;
  /** Told when a placement could not be removed (the store's deletion stands). */
  readonly warn?: (message: string) => void;
  /** Closes the HTTP client. */
  readonly close: () => void;
  /** Requests sent to the IdP so far. */
  readonly sent: () => number;
}

export class IdpGate {
  readonly #parts: IdpGateParts;
  readonly #positions = new PagePositions();

  constructor(parts: IdpGateParts) {
    this.#parts = parts;
  }

  verify(pass: string | undefined): Promise<Principal> {
    return this.#parts.verifier.verify(pass);
  }

  /**
   * A request's raw args with the sealed page position it continues from opened (positions.ts):
   * run before the args are decoded, since a sealed position is not a name or a key.
   */
  openPosition(verb: string, args: unknown): Opened {
    return this.#positions.open(verb, args);
  }

  async admit(principal: Principal, verb: string, args: ActArgs, sent: Sent): Promise<Admission> {
    if (Date.now() >= principal.expiresAt) {
      throw storeError("pass_expired", "the pass has expired since hello; connect with a new one");
    }
    const act: Act | undefined = Object.hasOwn(ACTS, verb) ? ACTS[verb] : undefined;
    if (act === undefined) {
      throw storeError("permission_denied", `${verb} has no identity-provider decision`);
    }
    const { database, evaluator } = this.#parts;
    // The branches the verb's refs read are decided read, in the same request as its own act.
    const reads: Question[] = (act.reads?.(args) ?? []).map((b) => ({
      action: READ_ACTION,
      resource: branchResource(database, args.collection!, b),
    }));
    if (act.kind === "rows") return this.#page(principal, verb, act, args, sent, reads);
    const own = act.kind === "one" ? [act.resource(database, args)] : act.resources(database, args);
    if (act.previews === true && args.dry_run === true)
      return this.#preview(principal, verb, own, reads);
    const questions = [...own.map((resource) => ({ action: verb, resource })), ...reads];
    const decisions =
      questions.length === 1
        ? [await evaluator.decide(principal, verb, own[0]!)]
        : await evaluator.ask(principal, questions, "deny_on_first_deny");
    if (decisions.length < questions.length || decisions.some((d) => !d)) {
      throw storeError("permission_denied", `${verb} is not allowed`);
    }
    return this.#placed(verb, args);
  }

  /**
   * A dry run of a verb that `previews`: read on its own resources and its refs' branches
   * admits it; the verb's own act, asked in the same batch, becomes the answer's `allowed`.
   */
  async #preview(
    principal: Principal,
    verb: string,
    own: readonly Resource[],
    reads: readonly Question[],
  ): Promise<Admission> {
    const read = [...own.map((resource) => ({ action: READ_ACTION, resource })), ...reads];
    const acts = own.map((resource) => ({ action: verb, resource }));
    const decisions = await this.#parts.evaluator.ask(principal, [...read, ...acts], "execute_all");
    if (
      decisions.length < read.length + acts.length ||
      !decisions.slice(0, read.length).every((d) => d)
    ) {
      throw storeError("permission_denied", `${verb} is not allowed, not even as a dry run`);
    }
    const allowed = decisions.slice(read.length).every((d) => d);
    return { onResult: async (result) => ({ ...(result as object), allowed }) };
  }

  /**
   * A page-filtered verb. With a scope, the scope is decided first: a caller allowed all of it
   * is shown the page whole (the contract's rule covers every row of the scope, so no row is
   * asked about); any other caller is a partial reader, refused when the
   * request chose its own range, else shown the rows it may read with the others counted.
   */
  async #page(
    principal: Principal,
    verb: string,
    act: Extract<Act, { kind: "rows" }>,
    args: ActArgs,
    sent: Sent,
    reads: readonly Question[],
  ): Promise<Admission> {
    const filter: Admission = {
      onResult: (result, again) =>
        act.fills === true
          ? this.#filled(principal, verb, act, args, sent, result, again)
          : this.#filter(principal, verb, act, args, sent.raw, result),
    };
    if (act.scope === undefined && reads.length === 0) return filter;
    const { database, evaluator } = this.#parts;
    const scope = act.scope?.(database, args) ?? [];
    const statistics = act.statistics?.(database, args);
    const asked: Resource[] =
      statistics === undefined ||
      scope.some((r) => r.type === statistics.type && r.id === statistics.id)
        ? scope
        : [...scope, statistics];
    // One request: the reads of the refs, the scope, and the statistics' branch.
    const decisions = await evaluator.ask(
      principal,
      [...reads, ...asked.map((resource) => ({ action: verb, resource }))],
      "execute_all",
    );
    if (decisions.slice(0, reads.length).some((d) => !d)) {
      throw storeError("permission_denied", `${verb} is not allowed`);
    }
    const own = decisions.slice(reads.length);
    if (act.scope !== undefined && own.slice(0, scope.length).every((d) => d)) {
      return {
        isolated: asked.length > scope.length && own[scope.length] !== true,
        onResult: async (result) =>
          this.#positions.seal(verb, sent.raw, { ...(result as object), denied: 0 }),
      };
    }
    if (act.narrows?.(args, sent.chosen) === true) {
      throw storeError(
        "permission_denied",
        `${verb} ranges over rows this pass may not read: list from the start (or under a ` +
          "prefix it may read whole) and continue only from the positions the store gave",
      );
    }
    return filter;
  }

  close(): void {
    this.#parts.close();
  }

  /** Requests sent to the IdP so far: a page's decisions cost one per batch. */
  get requestsSent(): number {
    return this.#parts.sent();
  }

  /** Which rows the caller may read, in one batch (a row may need several resources). */
  async #allowed(
    principal: Principal,
    verb: string,
    act: Extract<Act, { kind: "rows" }>,
    args: ActArgs,
    rows: readonly Record<string, unknown>[],
  ): Promise<boolean[]> {
    const perRow = rows.map((row) => act.resources(this.#parts.database, args, row));
    const decisions = await this.#parts.evaluator.decideMany(
      principal,
      verb,
      perRow.flat(),
      "execute_all",
    );
    let at = 0;
    return perRow.map((resources) => {
      at += resources.length;
      return decisions.slice(at - resources.length, at).every((d) => d);
    });
  }

  /** Leaves out the rows not allowed, in one batch for the page, and counts them. */
  async #filter(
    principal: Principal,
    verb: string,
    act: Extract<Act, { kind: "rows" }>,
    args: ActArgs,
    raw: unknown,
    result: unknown,
  ): Promise<unknown> {
    const page = result as Record<string, unknown>;
    const rows = page[act.field] as Record<string, unknown>[];
    const allowed = await this.#allowed(principal, verb, act, args, rows);
    const kept = rows.filter((_row, i) => allowed[i]);
    // The position continues after the last row examined, which may be denied: sealed, so the
    // page names no row it left out, and the next page starts exactly where this one ended.
    return this.#positions.seal(verb, raw, {
      ...page,
      [act.field]: kept,
      denied: rows.length - kept.length,
    });
  }

  /** A name list's page for a partial reader, filled with rows it may read (name-pages.ts). */
  async #filled(
    principal: Principal,
    verb: string,
    act: Extract<Act, { kind: "rows" }>,
    args: ActArgs,
    sent: Sent,
    result: unknown,
    again: Again,
  ): Promise<unknown> {
    const within = args.collection === undefined ? {} : { collection: args.collection };
    const page = await fillNamePage({
      first: result as NamePage,
      limit: args.limit,
      carried: sent.carried,
      allowed: (rows) => this.#allowed(principal, verb, act, args, rows),
      after: async (name) => (await again({ ...within, after: name })) as NamePage,
    });
    const { carried, ...shown } = page;
    return this.#positions.seal(verb, sent.raw, shown, carried);
  }

  /** Placement around the creating and deleting verbs (nothing without the app credential). */
  async #placed(verb: string, args: ActArgs): Promise<Admission> {
    const { placement } = this.#parts;
    if (placement === null) return NOTHING;
    const collection = args.collection!;
    switch (verb) {
      case "collections.create": {
        const created = await placement.place(collection);
        try {
          // A new collection has its main branch; records there need it placed too.
          await placement.place(collection, "main");
        } catch (error) {
          if (created) await this.#unplace(collection);
          throw error;
        }
        return created ? { onRefusal: () => this.#unplace(collection) } : NOTHING;
      }
      case "branches.create": {
        const branch = args.branch!;
        const created = await placement.place(collection, branch);
        return created ? { onRefusal: () => this.#unplace(collection, branch) } : NOTHING;
      }
      case "collections.delete":
        return { onResult: (result) => this.#unplace(collection).then(() => result) };
      case "branches.delete": {
        const branch = args.branch!;
        return { onResult: (result) => this.#unplace(collection, branch).then(() => result) };
      }
      default:
        return NOTHING;
    }
  }

  async #unplace(collection: string, branch?: string): Promise<void> {
    try {
      await this.#parts.placement!.remove(collection, branch);
    } catch (error) {
      const what =
        branch === undefined
          ? collectionResource(this.#parts.database, collection).id
          : branchResource(this.#parts.database, collection, branch).id;
      this.#parts.warn?.(`placement of ${what} not removed: ${(error as Error).message}`);
    }
  }
}
