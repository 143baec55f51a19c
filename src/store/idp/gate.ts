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
import { ACTS, type Act, type ActArgs, branchResource, collectionResource } from "./acts.ts";
import type { Evaluator } from "./evaluation.ts";
import type { PassVerifier, Principal } from "./passes.ts";
import type { Placement } from "./placement.ts";
import { PagePositions } from "./positions.ts";

/** What to do with the verb's answer once it ran. */
export interface Admission {
  /** Rewrites a successful result (a page without its denied rows); may reject with a refusal. */
  readonly onResult?: (result: unknown) => Promise<unknown>;
  /** Runs before a refusal of the verb is sent (undoes a placement made for it). */
  readonly onRefusal?: () => Promise<void>;
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
  openPosition(verb: string, args: unknown): unknown {
    return this.#positions.open(verb, args);
  }

  async admit(principal: Principal, verb: string, args: ActArgs): Promise<Admission> {
    if (Date.now() >= principal.expiresAt) {
      throw storeError("pass_expired", "the pass has expired since hello; connect with a new one");
    }
    const act: Act | undefined = Object.hasOwn(ACTS, verb) ? ACTS[verb] : undefined;
    if (act === undefined) {
      throw storeError("permission_denied", `${verb} has no identity-provider decision`);
    }
    const { database, evaluator } = this.#parts;
    if (act.kind === "rows") {
      return { onResult: (result) => this.#filter(principal, verb, act, args, result) };
    }
    if (act.kind === "one") {
      const allowed = await evaluator.decide(principal, verb, act.resource(database, args));
      if (!allowed) throw storeError("permission_denied", `${verb} is not allowed`);
    } else {
      const resources = act.resources(database, args);
      const decisions = await evaluator.decideMany(
        principal,
        verb,
        resources,
        "deny_on_first_deny",
      );
      if (decisions.some((d) => !d))
        throw storeError("permission_denied", `${verb} is not allowed`);
    }
    return this.#placed(verb, args);
  }

  close(): void {
    this.#parts.close();
  }

  /** Requests sent to the IdP so far: a page's decisions cost one per batch. */
  get requestsSent(): number {
    return this.#parts.sent();
  }

  /** Leaves out the rows not allowed, in one batch for the page, and counts them. */
  async #filter(
    principal: Principal,
    verb: string,
    act: Extract<Act, { kind: "rows" }>,
    args: ActArgs,
    result: unknown,
  ): Promise<unknown> {
    const page = result as Record<string, unknown>;
    const rows = page[act.field] as Record<string, unknown>[];
    const perRow = rows.map((row) => act.resources(this.#parts.database, args, row));
    const decisions = await this.#parts.evaluator.decideMany(
      principal,
      verb,
      perRow.flat(),
      "execute_all",
    );
    const kept: Record<string, unknown>[] = [];
    let at = 0;
    rows.forEach((row, i) => {
      const n = perRow[i]!.length;
      if (decisions.slice(at, at + n).every((d) => d)) kept.push(row);
      at += n;
    });
    // The position continues after the last row examined, which may be denied: sealed, so the
    // page names no row it left out, and the next page starts exactly where this one ended.
    return this.#positions.seal(verb, {
      ...page,
      [act.field]: kept,
      denied: rows.length - kept.length,
    });
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
