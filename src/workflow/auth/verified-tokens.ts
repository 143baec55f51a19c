/**
 * A bounded cache of verified bearer tokens. Verifying an Ed25519 JWT costs more than the
 * rest of a small request (a signature check on the thread pool), and a client sends the
 * same token with every request; a token that verified once maps to the same principal
 * until it expires, because the server's key only changes with a restart. Only tokens that
 * verified are kept (a refused one is checked again every time), each until its `exp`, the
 * least recently used leaving first when `max` are held.
 */

import type { Principal, TokenVerifier } from "./tokens.ts";

export interface VerifiedTokensOptions {
  /** Tokens held at most. */
  readonly max: number;
  /** Milliseconds since the epoch (tests move it). */
  readonly now?: () => number;
}

export function cachingVerifier(
  verify: TokenVerifier,
  options: VerifiedTokensOptions,
): TokenVerifier {
  const now = options.now ?? Date.now;
  const held = new Map<string, Principal>();
  // The token used last, already at the map's young end: a client sends one token with
  // every request, and moving it (a delete and a set per request) left deleted entries in
  // the map's table for V8 to rehash into new tables, in the old generation, over and over.
  let newest: string | undefined;
  const known = (token: string): Principal | undefined => {
    const principal = held.get(token);
    if (principal === undefined) return undefined;
    // Expired: verify again, which refuses it with the verifier's own code and message.
    if (principal.expiresAt * 1000 <= now()) {
      held.delete(token);
      if (token === newest) newest = undefined;
      return undefined;
    }
    if (token !== newest) {
      held.delete(token);
      held.set(token, principal);
      newest = token;
    }
    return principal;
  };
  const caching = async (token: string): Promise<Principal> => {
    const cached = known(token);
    if (cached !== undefined) return cached;
    const principal = await verify(token);
    if (options.max > 0) {
      if (held.size >= options.max) held.delete(held.keys().next().value!);
      held.set(token, principal);
      newest = token;
    }
    return principal;
  };
  return Object.assign(caching, { known });
}
