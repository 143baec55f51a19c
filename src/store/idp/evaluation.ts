/**
 * The AuthZEN 1.0 evaluation client: asks the IdP's policy decision point whether a subject
 * may take an action on resources. One resource is one `POST` to the evaluation endpoint;
 * many are one `POST` to the batch endpoint per `EVALUATIONS_PER_REQUEST` (a page of up to
 * that many records costs one round trip), the parts sent at once. Questions are
 * authenticated with the store's app token when it has one, else with the caller's own pass
 * (the IdP lets a pass ask about its own subject only). Nothing is cached: each act is asked.
 * Anything but a well-formed answer (no answer in time, an HTTP error, a malformed body) fails
 * closed as `idp_unavailable`; a denial is only ever `decision: false`.
 */

import { isCodedError, type SkeinError } from "../../common/errors.ts";
import { storeError } from "../errors.ts";
import type { Resource } from "./acts.ts";
import type { AppToken } from "./app-token.ts";
import { type IdpHttp, type IdpHttpAnswer, IdpHttpError, jsonBody } from "./http.ts";
import type { Principal } from "./passes.ts";

/** The IdP's bound on one batch (contract: more is HTTP 400). */
export const EVALUATIONS_PER_REQUEST = 1_000;

export type Semantic = "execute_all" | "deny_on_first_deny";

/** One question of a batch: an action on a resource (AuthZEN lets each item name its own). */
export interface Question {
  readonly action: string;
  readonly resource: Resource;
}

export interface Endpoints {
  readonly evaluation: URL;
  readonly evaluations: URL;
}

export class Evaluator {
  readonly #http: IdpHttp;
  readonly #endpoints: Endpoints;
  readonly #app: AppToken | null;

  constructor(http: IdpHttp, endpoints: Endpoints, app: AppToken | null) {
    this.#http = http;
    this.#endpoints = endpoints;
    this.#app = app;
  }

  async decide(principal: Principal, action: string, resource: Resource): Promise<boolean> {
    const body = { subject: principal.subject, action: { name: action }, resource, context: {} };
    const answer = (await this.#ask(principal, this.#endpoints.evaluation, body)) as {
      decision?: unknown;
    };
    if (typeof answer?.decision !== "boolean") throw malformed();
    return answer.decision;
  }

  /**
   * One decision per resource, in order. With `deny_on_first_deny` the answer may stop at the
   * first denial; the missing decisions are denials.
   */
  decideMany(
    principal: Principal,
    action: string,
    resources: readonly Resource[],
    semantic: Semantic,
  ): Promise<boolean[]> {
    return this.ask(
      principal,
      resources.map((resource) => ({ action, resource })),
      semantic,
    );
  }

  /** `decideMany` with an action per question (a verb's own act and the reads of its refs). */
  async ask(
    principal: Principal,
    questions: readonly Question[],
    semantic: Semantic,
  ): Promise<boolean[]> {
    if (questions.length === 0) return [];
    const parts: Promise<boolean[]>[] = [];
    for (let at = 0; at < questions.length; at += EVALUATIONS_PER_REQUEST) {
      const part = questions.slice(at, at + EVALUATIONS_PER_REQUEST);
      parts.push(this.#batch(principal, part, semantic));
    }
    return (await Promise.all(parts)).flat();
  }

  async #batch(
    principal: Principal,
    questions: readonly Question[],
    semantic: Semantic,
  ): Promise<boolean[]> {
    const body = {
      subject: principal.subject,
      context: {},
      evaluations: questions.map(({ action, resource }) => ({
        action: { name: action },
        resource,
      })),
      options: { evaluations_semantic: semantic },
    };
    const answer = (await this.#ask(principal, this.#endpoints.evaluations, body)) as {
      evaluations?: unknown;
    };
    const list = answer?.evaluations;
    if (!Array.isArray(list) || list.length > questions.length) throw malformed();
    const decisions = questions.map((_, i) => {
      const item = list[i] as { decision?: unknown } | undefined;
      if (item === undefined) return false;
      if (typeof item?.decision !== "boolean") throw malformed();
      return item.decision;
    });
    if (semantic === "execute_all" && list.length !== questions.length) throw malformed();
    return decisions;
  }

  async #ask(principal: Principal, url: URL, body: object): Promise<unknown> {
    try {
      let answer = await this.#post(url, body, await this.#credential(principal));
      if (answer.status === 401 && this.#app !== null) {
        // The app token may have been revoked or the IdP restarted with new keys: once more.
        this.#app.forget();
        answer = await this.#post(url, body, await this.#credential(principal));
      }
      if (answer.status !== 200) {
        throw storeError(
          "idp_unavailable",
          `the identity provider did not decide (HTTP ${answer.status})`,
        );
      }
      return jsonBody(answer);
    } catch (error) {
      throw unavailable(error);
    }
  }

  #credential(principal: Principal): Promise<string> | string {
    return this.#app === null ? principal.pass : this.#app.token();
  }

  #post(url: URL, body: object, token: string): Promise<IdpHttpAnswer> {
    return this.#http.request(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify(body),
    });
  }
}

function malformed(): SkeinError {
  return storeError("idp_unavailable", "the identity provider's answer is not an AuthZEN decision");
}

/** A transport failure, as the coded refusal an act gets; coded refusals pass unchanged. */
export function unavailable(error: unknown): unknown {
  if (error instanceof IdpHttpError) {
    return storeError("idp_unavailable", `the identity provider did not answer (${error.kind})`);
  }
  return isCodedError(error) ? error : storeError("idp_unavailable");
}
