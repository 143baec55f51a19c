/**
 * Verifies the pass a caller presents at hello: a JWT access token signed with a key of the
 * issuer's JWKS, issued by the configured issuer, for this store's database (audience
 * `urn:skein:store:<database>`), not expired. The key set is fetched at start-up and fetched
 * again when a pass names a key id it does not hold (at most once per cooldown, so a stream of
 * forged key ids cannot make the store hammer the IdP), and when it is older than its
 * maximum age. Each refusal has its own code; none quotes the pass.
 */

import {
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  errors,
  type FetchImplementation,
  jwtVerify,
  type RemoteJWKSet,
} from "jose";
import type { SkeinError } from "../../common/errors.ts";
import { STORE_REFUSALS, storeError } from "../errors.ts";
import { IDP_REQUEST_TIMEOUT_MS, type IdpHttp, IdpHttpError } from "./http.ts";

/**
 * Least time between two fetches of the key set for unknown key ids: a key rotation is seen
 * within it, and a caller cannot cause more than one fetch per interval.
 */
export const JWKS_REFRESH_COOLDOWN_MS = 30_000;
/** Age after which the key set is fetched again, so a key the IdP withdrew stops verifying. */
export const JWKS_MAX_AGE_MS = 600_000;
/** Clock skew allowed between the store and the IdP when checking `exp`, `nbf`, `iat`. */
export const PASS_CLOCK_TOLERANCE_S = 5;
/** A pass longer than this is not one the IdP issued; refused before any parsing. */
export const PASS_MAX_BYTES = 16_384;

export type SubjectType = "user" | "client";

/** Who a connection acts for, from its verified pass. */
export interface Principal {
  readonly subject: { readonly type: SubjectType; readonly id: string };
  /** Expiry, in ms since the epoch: acts after it are refused with `pass_expired`. */
  readonly expiresAt: number;
  /** The pass itself: the credential for questions about this subject without an app token. */
  readonly pass: string;
}

export function storeAudience(database: string): string {
  return `urn:skein:store:${database}`;
}

export class PassVerifier {
  readonly #jwks: RemoteJWKSet;
  readonly #issuer: string;
  readonly #audience: string;

  constructor(
    http: IdpHttp,
    jwksUri: URL,
    issuer: string,
    database: string,
    cooldownMs = JWKS_REFRESH_COOLDOWN_MS,
  ) {
    this.#issuer = issuer;
    this.#audience = storeAudience(database);
    this.#jwks = createRemoteJWKSet(jwksUri, {
      cooldownDuration: cooldownMs,
      cacheMaxAge: JWKS_MAX_AGE_MS,
      timeoutDuration: IDP_REQUEST_TIMEOUT_MS,
      [customFetch]: boundedFetch(http),
    });
  }

  /** Fetches the key set now (start-up): a failure is the IdP's, reported by the caller. */
  load(): Promise<void> {
    return this.#jwks.reload();
  }

  async verify(pass: string | undefined): Promise<Principal> {
    if (pass === undefined || pass === "") {
      // The audience is named so a gateway (the door) learns which database's pass to bring.
      throw storeError(
        "pass_required",
        `${STORE_REFUSALS.pass_required} (audience ${this.#audience})`,
      );
    }
    if (Buffer.byteLength(pass) > PASS_MAX_BYTES) {
      throw storeError("pass_invalid", `the pass is longer than ${PASS_MAX_BYTES} bytes`);
    }
    // The refusal is named from the claims before any key is looked up: a pass from another
    // issuer (whose key id is unknown here) never makes the store fetch the key set again.
    const named = claimsRefusal(pass, this.#issuer, this.#audience);
    if (named !== undefined) throw named;
    try {
      const { payload } = await jwtVerify(pass, this.#jwks, {
        issuer: this.#issuer,
        audience: this.#audience,
        clockTolerance: PASS_CLOCK_TOLERANCE_S,
        requiredClaims: ["sub", "exp"],
      });
      const type = payload.skein_subject_type === "client" ? "client" : "user";
      return {
        subject: { type, id: payload.sub! },
        expiresAt: payload.exp! * 1000,
        pass,
      };
    } catch (error) {
      throw passRefusal(error);
    }
  }
}

/** The refusal the pass's own (unverified) claims call for, if any. */
function claimsRefusal(pass: string, issuer: string, audience: string): SkeinError | undefined {
  let claims: ReturnType<typeof decodeJwt>;
  try {
    claims = decodeJwt(pass);
  } catch {
    return storeError("pass_invalid");
  }
  if (claims.iss !== issuer) return storeError("pass_foreign_issuer");
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!aud.includes(audience)) return storeError("pass_wrong_audience");
  if (typeof claims.exp === "number" && claims.exp + PASS_CLOCK_TOLERANCE_S <= Date.now() / 1000) {
    return storeError("pass_expired");
  }
  return undefined;
}

function passRefusal(error: unknown): SkeinError {
  if (error instanceof errors.JWTExpired) return storeError("pass_expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "iss") return storeError("pass_foreign_issuer");
    if (error.claim === "aud") return storeError("pass_wrong_audience");
    return storeError("pass_invalid", `the pass's ${error.claim} claim is not valid`);
  }
  if (error instanceof IdpHttpError || error instanceof errors.JWKSTimeout) {
    return storeError("idp_unavailable", "the identity provider's keys could not be fetched");
  }
  if (error instanceof errors.JOSEError && error.code === "ERR_JWKS_INVALID") {
    return storeError("idp_unavailable", "the identity provider's key set is not valid");
  }
  return storeError("pass_invalid");
}

/** jose's fetch hook, served by the store's bounded IdP client. */
function boundedFetch(http: IdpHttp): FetchImplementation {
  return async (url) => {
    const answer = await http.request(new URL(url), {
      method: "GET",
      headers: { accept: "application/json" },
    });
    if (answer.status !== 200) {
      throw new IdpHttpError("status", `GET ${new URL(url).pathname}: HTTP ${answer.status}`);
    }
    return new Response(new Uint8Array(answer.body), {
      status: answer.status,
      headers: { "content-type": answer.contentType },
    });
  };
}
