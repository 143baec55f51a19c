/**
 * The one rule for reading a bearer credential, shared by every wire that takes one (HTTP
 * routes, the agent transport's WebSocket upgrade, gRPC worker metadata). RFC 7235 makes the
 * auth scheme case-insensitive and RFC 6750 fixes the credential to token68 characters;
 * surrounding whitespace is ignored. Anything else is "no bearer", which each wire turns into
 * its own 401-style refusal.
 */

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The token of `Bearer <token>`, or undefined when the header is absent or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header.trim())?.[1];
}
