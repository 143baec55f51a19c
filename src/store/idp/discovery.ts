/**
 * Start-up of the store's identity client: reads the issuer's OIDC discovery document and its
 * AuthZEN configuration, fetches its key set, and (with the app credential) obtains the app
 * token, before the store listens. Which fault gives which refusal:
 *
 * - `endpoint_refused`: nothing answers HTTP at the issuer address (the name does not
 *   resolve, the connection is refused or reset, TLS fails, no connection within 5 s, no
 *   whole answer within 15 s);
 * - `contract_refused`: something answers, but not what the store needs (a status other than
 *   200, a body that is not JSON, a discovery document without `jwks_uri` or naming another
 *   issuer, an AuthZEN configuration without both evaluation endpoints, an endpoint on
 *   another origin than the issuer, a key set that is not a JWKS, no token endpoint while a
 *   placement credential is configured);
 * - `idp_credential_refused`: the token endpoint does not accept the app credential.
 */

import { SkeinError } from "../../common/errors.ts";
import { CONTRACT_REFUSED, ENDPOINT_REFUSED } from "../config/idp.ts";
import type { StoreIdpSettings } from "../config/types.ts";
import { AppToken } from "./app-token.ts";
import { Evaluator } from "./evaluation.ts";
import { IdpGate } from "./gate.ts";
import { IdpHttp, type IdpHttpBounds, IdpHttpError, jsonBody } from "./http.ts";
import { PassVerifier } from "./passes.ts";
import { Placement } from "./placement.ts";

export const IDP_CREDENTIAL_REFUSED = "idp_credential_refused";

export interface ConnectIdpOptions {
  /** The app credential read from `idp.placement_credential_file`; null without it. */
  readonly credential: string | null;
  readonly warn?: (message: string) => void;
  /** Test seam for the HTTP bounds; production uses the spec's. */
  readonly bounds?: Partial<IdpHttpBounds>;
  /**
   * Test seam for the least time between key-set fetches for unknown key ids (production:
   * JWKS_REFRESH_COOLDOWN_MS), so a rotation test need not wait out the 30 s cooldown.
   */
  readonly jwksCooldownMs?: number;
}

export async function connectIdp(
  settings: StoreIdpSettings,
  options: ConnectIdpOptions,
): Promise<IdpGate> {
  const http = new IdpHttp(options.bounds);
  try {
    return await discover(http, settings, options);
  } catch (error) {
    http.close();
    throw error;
  }
}

async function discover(
  http: IdpHttp,
  settings: StoreIdpSettings,
  options: ConnectIdpOptions,
): Promise<IdpGate> {
  const { issuer, database } = settings;
  const oidc = await fetchDocument(http, issuer, "/.well-known/openid-configuration");
  if (sameIssuer(oidc.issuer, issuer) === false) {
    throw refused(CONTRACT_REFUSED, "the discovery document names another issuer");
  }
  const jwksUri = endpoint(oidc, "jwks_uri", issuer, "the discovery document");
  const authzen = await fetchDocument(http, issuer, "/.well-known/authzen-configuration");
  const where = "the AuthZEN configuration";
  const endpoints = {
    evaluation: endpoint(authzen, "access_evaluation_endpoint", issuer, where),
    evaluations: endpoint(authzen, "access_evaluations_endpoint", issuer, where),
  };
  // Passes carry the issuer exactly as the IdP names itself.
  const verifier = new PassVerifier(
    http,
    jwksUri,
    oidc.issuer as string,
    database,
    options.jwksCooldownMs,
  );
  try {
    await verifier.load();
  } catch (error) {
    if (error instanceof IdpHttpError && error.kind !== "status" && error.kind !== "too_large") {
      throw refused(ENDPOINT_REFUSED, `the key set did not arrive (${error.kind})`);
    }
    throw refused(CONTRACT_REFUSED, "jwks_uri does not serve a JSON Web Key Set");
  }
  let app: AppToken | null = null;
  let placement: Placement | null = null;
  if (options.credential !== null) {
    const tokenEndpoint = endpoint(oidc, "token_endpoint", issuer, "the discovery document");
    app = new AppToken(http, tokenEndpoint, options.credential, database);
    try {
      await app.token();
    } catch (error) {
      if (error instanceof IdpHttpError) {
        throw refused(ENDPOINT_REFUSED, `the token endpoint did not answer (${error.kind})`);
      }
      throw new SkeinError(
        IDP_CREDENTIAL_REFUSED,
        "idp.placement_credential_file: the identity provider does not accept the app credential",
      );
    }
    placement = new Placement(http, issuer, database, app);
  }
  return new IdpGate({
    database,
    verifier,
    evaluator: new Evaluator(http, endpoints, app),
    placement,
    ...(options.warn === undefined ? {} : { warn: options.warn }),
    close: () => http.close(),
    sent: () => http.sent,
  });
}

async function fetchDocument(
  http: IdpHttp,
  issuer: string,
  path: string,
): Promise<Record<string, unknown>> {
  let answer: Awaited<ReturnType<IdpHttp["request"]>>;
  try {
    answer = await http.request(new URL(path, issuer), {
      method: "GET",
      headers: { accept: "application/json" },
    });
  } catch (error) {
    if (error instanceof IdpHttpError && error.kind === "too_large") {
      throw refused(CONTRACT_REFUSED, `${path} is larger than the store reads`);
    }
    const kind = error instanceof IdpHttpError ? error.kind : "failed";
    throw refused(ENDPOINT_REFUSED, `nothing answered ${path} (${kind})`);
  }
  if (answer.status !== 200) {
    throw refused(CONTRACT_REFUSED, `${path} answered HTTP ${answer.status}`);
  }
  const body = jsonBody(answer);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw refused(CONTRACT_REFUSED, `${path} is not a JSON object`);
  }
  return body as Record<string, unknown>;
}

/** A URL field of a document, which must be on the issuer's own origin. */
function endpoint(doc: Record<string, unknown>, field: string, issuer: string, where: string): URL {
  const value = doc[field];
  let url: URL | undefined;
  try {
    url = typeof value === "string" ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined) throw refused(CONTRACT_REFUSED, `${where} has no valid ${field}`);
  if (url.origin !== new URL(issuer).origin) {
    throw refused(CONTRACT_REFUSED, `${where}'s ${field} is not on the issuer's origin`);
  }
  return url;
}

function sameIssuer(named: unknown, issuer: string): boolean {
  return typeof named === "string" && named.replace(/\/$/, "") === issuer.replace(/\/$/, "");
}

function refused(code: string, reason: string): SkeinError {
  return new SkeinError(code, `idp.issuer: ${code}: ${reason}`);
}
