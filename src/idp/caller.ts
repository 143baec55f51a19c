/**
 * Who is asking: the evaluation and placement APIs take `authorization: Bearer <token>`,
 * an access token this provider issued (a JWT of type `at+jwt`, signed by a key in its
 * JWKS, our issuer, not expired, audience a store database indicator). Two kinds of caller:
 *
 * - the **app** of a database: a client-credentials token of a client marked `--app D`,
 *   whose audience is `urn:skein:store:D`; it may ask about any subject within D and place
 *   collections and branches of D;
 * - a **self** caller: any other pass, which may ask only about its own subject (`sub` and
 *   `skein_subject_type`) within the database of its audience.
 *
 * ID tokens, foreign or expired tokens and anything else are `invalid_token` (401).
 * Verified tokens are remembered until their `exp` in a bounded map, so a store asking many
 * evaluations with one token verifies its signature once.
 */

import type { IncomingMessage } from "node:http";
import { createLocalJWKSet, type JWK, jwtVerify } from "jose";
import { VERIFIED_TOKEN_CACHE } from "./bounds.ts";
import { SIGNING_ALG } from "./data-dir.ts";
import { idpError } from "./errors.ts";
import { indicatorDatabase } from "./names.ts";
import type { IdpState } from "./state/state.ts";

export type Caller =
  | { readonly kind: "app"; readonly database: string; readonly clientId: string }
  | {
      readonly kind: "self";
      readonly database: string;
      readonly subjectType: "user" | "client";
      readonly subject: string;
    };

interface Remembered {
  readonly caller: Caller;
  readonly expiresAt: number;
}

export class CallerAuthenticator {
  readonly #issuer: string;
  readonly #state: IdpState;
  readonly #keys: ReturnType<typeof createLocalJWKSet>;
  readonly #verified = new Map<string, Remembered>();

  constructor(issuer: string, state: IdpState, signing: readonly JWK[]) {
    this.#issuer = issuer;
    this.#state = state;
    const publicKeys = signing.map(({ d: _d, ...rest }) => rest);
    this.#keys = createLocalJWKSet({ keys: publicKeys });
  }

  async authenticate(request: IncomingMessage): Promise<Caller> {
    const header = request.headers.authorization;
    if (header === undefined) throw idpError("unauthenticated");
    const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
    if (match === null)
      throw idpError("unauthenticated", "the authorization header must be Bearer <token>");
    const token = match[1]!;
    const remembered = this.#verified.get(token);
    if (remembered !== undefined && remembered.expiresAt > Date.now()) return remembered.caller;
    const { caller, expiresAt } = await this.#verify(token);
    if (this.#verified.size >= VERIFIED_TOKEN_CACHE) {
      const oldest = this.#verified.keys().next();
      if (!oldest.done) this.#verified.delete(oldest.value);
    }
    this.#verified.set(token, { caller, expiresAt });
    return caller;
  }

  async #verify(token: string): Promise<Remembered> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.#keys, {
        issuer: this.#issuer,
        algorithms: [SIGNING_ALG],
        typ: "at+jwt",
        requiredClaims: ["sub", "exp", "aud", "client_id"],
      }));
    } catch {
      throw idpError("invalid_token");
    }
    const aud =
      Array.isArray(payload.aud) && payload.aud.length === 1 ? payload.aud[0] : payload.aud;
    const database = typeof aud === "string" ? indicatorDatabase(aud) : undefined;
    const type = payload.skein_subject_type;
    const sub = payload.sub;
    if (
      database === undefined ||
      (type !== "user" && type !== "client") ||
      typeof sub !== "string"
    ) {
      throw idpError("invalid_token", "the bearer token is not a store pass of this provider");
    }
    const expiresAt = (payload.exp as number) * 1000;
    const clientId = payload.client_id as string;
    if (type === "client" && sub === clientId) {
      const client = this.#state.client(clientId);
      if (client?.appDatabase === database) {
        return { caller: { kind: "app", database, clientId }, expiresAt };
      }
    }
    return { caller: { kind: "self", database, subjectType: type, subject: sub }, expiresAt };
  }
}
