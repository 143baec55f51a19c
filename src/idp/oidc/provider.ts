/**
 * The OAuth 2.0 / OpenID Connect side of skein-idp, configured on oidc-provider: discovery
 * and JWKS at the issuer, authorization code with PKCE (required for every client) through
 * the plain login page (login.ts), client credentials, and JWT access tokens for store
 * databases named by resource indicators (`urn:skein:store:<database>`, RFC 8707). Every
 * access token carries `skein_subject_type` ("client" for client credentials, else "user"),
 * which the store passes on as the AuthZEN subject type.
 */

import Provider, { type Configuration, errors, type KoaContextWithOIDC } from "oidc-provider";
import { ACCESS_TOKEN_TTL_SECONDS, INTERACTION_TTL_SECONDS } from "../bounds.ts";
import { type KeyFile, SIGNING_ALG } from "../data-dir.ts";
import { indicatorDatabase } from "../names.ts";
import { verifySecret } from "../secrets.ts";
import type { IdpState } from "../state/state.ts";
import { sqliteAdapterFactory } from "./adapter.ts";

/** The one scope a store pass carries; AuthZEN, not scopes, decides what it may do. */
export const STORE_SCOPE = "store";

/** Interactions (the login page) are served under this path by login.ts. */
export const INTERACTION_PATH = "/interaction/";

export function createProvider(
  issuer: string,
  state: IdpState,
  keys: KeyFile,
  passTtlSeconds = ACCESS_TOKEN_TTL_SECONDS,
): Provider {
  const configuration: Configuration = {
    adapter: sqliteAdapterFactory(state) as unknown as Configuration["adapter"],
    jwks: { keys: keys.signing as NonNullable<Configuration["jwks"]>["keys"] },
    cookies: { keys: keys.cookies },
    clientDefaults: {
      id_token_signed_response_alg: SIGNING_ALG,
      token_endpoint_auth_method: "client_secret_basic",
    },
    scopes: ["openid", "offline_access", STORE_SCOPE],
    claims: { openid: ["sub"] },
    async findAccount(_ctx, id) {
      if (!state.hasUser(id)) return undefined;
      return { accountId: id, claims: async () => ({ sub: id }) };
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? (undefined as unknown as string),
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicatorDatabase(indicator) === undefined) throw new errors.InvalidTarget();
          return {
            scope: STORE_SCOPE,
            audience: indicator,
            accessTokenFormat: "jwt",
            accessTokenTTL: passTtlSeconds,
            jwt: { sign: { alg: SIGNING_ALG } },
          };
        },
      },
    },
    pkce: { required: () => true },
    async extraTokenClaims(_ctx, token) {
      return { skein_subject_type: token.kind === "ClientCredentials" ? "client" : "user" };
    },
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction) => `${INTERACTION_PATH}${interaction.uid}`,
    },
    ttl: {
      AccessToken: passTtlSeconds,
      ClientCredentials: passTtlSeconds,
      AuthorizationCode: 60,
      IdToken: ACCESS_TOKEN_TTL_SECONDS,
      Interaction: INTERACTION_TTL_SECONDS,
      Grant: 14 * 24 * 3600,
      Session: 14 * 24 * 3600,
      RefreshToken: 14 * 24 * 3600,
    },
  };
  const provider = new Provider(issuer, configuration);
  // Client secrets are stored as scrypt hashes; oidc-provider compares the stored value with
  // what the client sent, so the comparison is replaced by a hash check (it awaits the result).
  const clientClass = provider.Client as unknown as {
    prototype: { clientSecret: string; compareClientSecret(actual: string): Promise<boolean> };
  };
  clientClass.prototype.compareClientSecret = function (actual: string) {
    return verifySecret(actual, this.clientSecret);
  };
  return provider;
}
