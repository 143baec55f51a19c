/**
 * Bearer tokens: JWTs signed by the server's Ed25519 key (jose, alg EdDSA). Claims: `sub`
 * (who), `ns` (namespace names, or "*" for all), `deploy` (may manage worker deployments),
 * `worker` (may connect as a worker), `iat`, `exp`, `iss` = "skein", and `node` (the node id
 * of a cluster node's own credential, which only node-credential.ts issues: `issueToken`
 * cannot set it, so no `skein token issue` bearer holds it). Verification checks the
 * signature, issuer and expiry, then decodes the claims with the decoding core, so past this
 * module a Principal is typed and trusted. Every failure is one `unauthenticated` refusal.
 */

import type { KeyObject } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import {
  array,
  boolean,
  DecodeError,
  type Decoder,
  describeValue,
  object,
  optional,
  refuse,
  string,
  u64,
  withDefault,
} from "../../common/decode/index.ts";
import { workflowError } from "../errors.ts";

export const ISSUER = "skein";

/** What a bearer may do. `namespaces` is "*" (every namespace) or the granted names. */
export interface Principal {
  readonly subject: string;
  readonly namespaces: "*" | ReadonlySet<string>;
  readonly deploy: boolean;
  readonly worker: boolean;
  /** The cluster node this credential belongs to (node-credential.ts); else undefined. */
  readonly node: string | undefined;
  /** Expiry, in seconds since the epoch. */
  readonly expiresAt: number;
}

export function canAccessNamespace(principal: Principal, name: string): boolean {
  return principal.namespaces === "*" || principal.namespaces.has(name);
}

export interface TokenRequest {
  readonly subject: string;
  readonly namespaces: "*" | readonly string[];
  readonly deploy?: boolean;
  readonly worker?: boolean;
  readonly ttlSeconds: number;
}

export function issueToken(key: KeyObject, request: TokenRequest): Promise<string> {
  return sign(key, request, undefined);
}

/**
 * A cluster node's own credential: the `node` claim and no grant at all, so it is good for
 * node-to-node routes only (node-credential.ts mints and renews it). `skein token issue` goes
 * through `issueToken`, which cannot set the claim.
 */
export function issueNodeToken(
  key: KeyObject,
  nodeId: string,
  ttlSeconds: number,
): Promise<string> {
  return sign(key, { subject: `node:${nodeId}`, namespaces: [], ttlSeconds }, nodeId);
}

async function sign(
  key: KeyObject,
  request: TokenRequest,
  node: string | undefined,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    ns: request.namespaces === "*" ? "*" : [...request.namespaces],
    deploy: request.deploy ?? false,
    worker: request.worker ?? false,
    ...(node === undefined ? {} : { node }),
  })
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
    .setIssuer(ISSUER)
    .setSubject(request.subject)
    .setIssuedAt(now)
    .setExpirationTime(now + request.ttlSeconds)
    .sign(key);
}

function namespaceGrant(): Decoder<"*" | string[]> {
  const names = array(string({ minBytes: 1 }));
  return {
    expected: '"*" or array of namespace names',
    run(value, path) {
      if (value === "*") return "*";
      if (Array.isArray(value)) return names.run(value, path);
      return refuse("type", path, `expected "*" or an array, found ${describeValue(value)}`);
    },
  };
}

const claims = object({
  iss: string(),
  sub: string({ minBytes: 1 }),
  ns: namespaceGrant(),
  deploy: withDefault(boolean(), false),
  worker: withDefault(boolean(), false),
  node: optional(string({ minBytes: 1 })),
  iat: optional(u64()),
  exp: u64(),
});

export type TokenVerifier = ((token: string) => Promise<Principal>) & {
  /**
   * The principal of a token verified before and still valid, answered at once; undefined
   * when it must be verified (verified-tokens.ts's cache has it).
   */
  readonly known?: (token: string) => Principal | undefined;
};

/** `now` is the clock `exp` is checked against (milliseconds; tests pass their own). */
export function createVerifier(
  publicKey: KeyObject,
  { now = Date.now }: { now?: () => number } = {},
): TokenVerifier {
  return async (token) => {
    let payload: unknown;
    try {
      ({ payload } = await jwtVerify(token, publicKey, {
        algorithms: ["EdDSA"],
        issuer: ISSUER,
        requiredClaims: ["exp", "sub"],
        currentDate: new Date(now()),
      }));
    } catch (error) {
      const reason = (error as { code?: string }).code ?? "invalid";
      throw workflowError("unauthenticated", `bearer token refused (${reason})`, error);
    }
    try {
      const c = claims.run(payload, undefined);
      return {
        subject: c.sub,
        namespaces: c.ns === "*" ? "*" : new Set(c.ns),
        deploy: c.deploy,
        worker: c.worker,
        node: c.node,
        expiresAt: Number(c.exp),
      };
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error;
      throw workflowError("unauthenticated", `bearer token claims refused: ${error.message}`);
    }
  };
}
