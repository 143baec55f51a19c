/**
 * The door's OpenID Connect client: at start-up it fetches the issuer's discovery document
 * (through the store's bounded IdP HTTP client, with the door's SERVICE_IDP_* allowances),
 * and afterwards it builds authorization requests (code + PKCE S256) and redeems the code a
 * browser brings back to `/callback` for a pass naming a store database (RFC 8707 resource).
 * The app credential authenticates the door at the token endpoint; tokens stay server-side.
 */

import * as oidc from "openid-client";
import { SkeinError } from "../../common/errors.ts";
import { CONTRACT_REFUSED, ENDPOINT_REFUSED } from "../config/idp.ts";
import type { DoorEnv, DoorIdpSettings } from "../config/types.ts";
import { IdpHttp, IdpHttpError } from "../idp/http.ts";

/** The audience a store of `database` verifies (skein-idp's resource indicator). */
export function storeResource(database: string): string {
  return `urn:skein:store:${database}`;
}

export interface Pass {
  readonly token: string;
  /** Epoch ms after which the store will refuse it. */
  readonly expiresAt: number;
}

export interface Redeemed {
  readonly subject: string;
  readonly pass: Pass;
  readonly refreshToken: string | undefined;
}

export class DoorIssuer {
  readonly #config: oidc.Configuration;
  readonly #http: IdpHttp;
  readonly #redirect: string;

  private constructor(config: oidc.Configuration, http: IdpHttp, redirect: string) {
    this.#config = config;
    this.#http = http;
    this.#redirect = redirect;
  }

  /** Discovery before listening: an issuer that does not answer, or answers nonsense, refuses. */
  static async discover(idp: DoorIdpSettings, secret: string, env: DoorEnv): Promise<DoorIssuer> {
    const http = new IdpHttp({
      connectMs: Number(env.SERVICE_IDP_CONNECT_TIMEOUT_MS),
      requestMs: Number(env.SERVICE_IDP_TIMEOUT_MS),
    });
    const insecure = new URL(idp.issuer).protocol === "http:";
    try {
      const config = await oidc.discovery(
        new URL(idp.issuer),
        idp.client_id,
        undefined,
        oidc.ClientSecretBasic(secret),
        {
          [oidc.customFetch]: fetchThrough(http),
          ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      );
      if (config.serverMetadata().token_endpoint === undefined) {
        throw new SkeinError(CONTRACT_REFUSED, "the discovery document names no token endpoint");
      }
      config[oidc.customFetch] = fetchThrough(http);
      return new DoorIssuer(config, http, idp.redirect);
    } catch (error) {
      http.close();
      throw startRefusal(error);
    }
  }

  /** The address a browser is sent to, for one pending sign-in. */
  async authorizationUrl(state: string, verifier: string, resources: string[]): Promise<URL> {
    const params = new URLSearchParams({
      redirect_uri: this.#redirect,
      scope: "openid offline_access",
      prompt: "consent",
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    });
    for (const resource of resources) params.append("resource", resource);
    return oidc.buildAuthorizationUrl(this.#config, params);
  }

  /**
   * Redeems the code of `callback` (the full callback URL) for a pass of `resource`; without
   * one (no listed store answered at sign-in) the sign-in still completes, and passes come
   * later from the refresh token.
   */
  async redeem(
    callback: URL,
    state: string,
    verifier: string,
    resource: string | undefined,
  ): Promise<Redeemed> {
    const tokens = await oidc.authorizationCodeGrant(
      this.#config,
      callback,
      { expectedState: state, pkceCodeVerifier: verifier, idTokenExpected: true },
      resource === undefined ? {} : { resource },
    );
    const subject = tokens.claims()?.sub;
    if (subject === undefined) throw new Error("the ID token names no subject");
    return { subject, pass: passOf(tokens), refreshToken: tokens.refresh_token };
  }

  /** A pass for another database of the same sign-in, from its refresh token. */
  async passFor(refreshToken: string, resource: string): Promise<Pass> {
    return passOf(await oidc.refreshTokenGrant(this.#config, refreshToken, { resource }));
  }

  close(): void {
    this.#http.close();
  }
}

function passOf(tokens: oidc.TokenEndpointResponse): Pass {
  const seconds = tokens.expires_in ?? 300;
  return { token: tokens.access_token, expiresAt: Date.now() + seconds * 1000 };
}

/** openid-client's fetch hook, served by the bounded IdP client (connect and whole bounds). */
function fetchThrough(http: IdpHttp): oidc.CustomFetch {
  return async (url, options) => {
    const answer = await http.request(new URL(url), {
      method: options.method as "GET" | "POST",
      headers: options.headers,
      ...(typeof options.body === "string" ? { body: options.body } : {}),
      ...(options.body instanceof URLSearchParams ? { body: options.body.toString() } : {}),
    });
    return new Response(answer.status === 204 ? null : new Uint8Array(answer.body), {
      status: answer.status,
      headers: { "content-type": answer.contentType },
    });
  };
}

function startRefusal(error: unknown): SkeinError {
  if (error instanceof SkeinError) return startMessage(error.code, error.message);
  const cause = (error as { cause?: unknown }).cause;
  if (error instanceof IdpHttpError || cause instanceof IdpHttpError) {
    const http = (error instanceof IdpHttpError ? error : cause) as IdpHttpError;
    const code = http.kind === "status" ? CONTRACT_REFUSED : ENDPOINT_REFUSED;
    return startMessage(code, http.message);
  }
  return startMessage(CONTRACT_REFUSED, (error as Error).message);
}

function startMessage(code: string, reason: string): SkeinError {
  return new SkeinError(
    code,
    `idp.issuer: ${code}: the identity provider's discovery failed (${reason})`,
  );
}
