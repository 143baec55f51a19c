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
  const known = (token: string): Principal | undefined => {
    const principal = held.get(token);
    if (principal === undefined) return undefined;
    held.delete(token);
    // Expired: verify again, which refuses it with the verifier's own code and message.
    if (principal.expiresAt * 1000 <= now()) return undefined;
    held.set(token, principal);
    return principal;
  };
  const caching = async (token: string): Promise<Principal> => {
    const cached = known(token);
    if (cached !== undefined) return cached;
    const principal = await verify(token);
    if (options.max > 0) {
      if (held.size >= options.max) held.delete(held.keys().next().value!);
      held.set(token, principal);
    }
    return principal;
  };
  return Object.assign(caching, { known });
}
