/**
 * Bearer authentication for every route except those whose config says `public: true`
 * (only `/health`) or `bearer: "route"` (the MCP endpoint, which signs callers in itself). It runs on `onRequest`, before the body is read, so an unauthenticated
 * caller cannot make the server parse anything. A missing, malformed, expired or foreign
 * bearer is 401 `unauthenticated`; routes then check grants and answer 403 `forbidden`. A
 * route whose config says `nodeToNode: true` takes only a cluster node's credential (any
 * other bearer, whatever its grants, is 403 here, before its body is read).
 */

import type { FastifyInstance, FastifyRequest } from "fastify";
import { bearerToken } from "../auth/bearer.ts";
import { requireNode } from "../auth/node-credential.ts";
import type { Principal, TokenVerifier } from "../auth/tokens.ts";
import { workflowError } from "../errors.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** A route anyone may call without a bearer. */
    public?: boolean;
    /** A route only cluster nodes call (auth/node-credential.ts). */
    nodeToNode?: boolean;
    /** A route that signs its caller in itself (the MCP endpoint: its own 401 challenge). */
    bearer?: "route";
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function installAuth(app: FastifyInstance, verify: TokenVerifier): void {
  app.decorateRequest("principal", null);
  // A callback hook, not an async one: a bearer the verifier already knows (`known`, every
  // request of a client after its first) is admitted without a promise or a microtask turn.
  // Fastify catches what it throws and passes it on as an error, as for an async hook.
  app.addHook("onRequest", (request, _reply, done) => {
    const config = request.routeOptions.config;
    if (config?.public === true || config?.bearer === "route") return done();
    const header = request.headers.authorization;
    if (header === undefined) {
      throw workflowError("unauthenticated", "missing authorization: Bearer <token>");
    }
    const admit = (principal: Principal) => {
      request.principal = principal;
      if (config?.nodeToNode === true) requireNode(principal);
    };
    // A client's usual header, `Bearer <a token that verified before>`, is found in the
    // cache without the bearer rule's regular expression (about 0.5 µs over a JWT): every
    // cached token passed that rule, so only what the cache does not hold is checked.
    const cached = header.startsWith("Bearer ") ? verify.known?.(header.slice(7)) : undefined;
    if (cached !== undefined) {
      admit(cached);
      return done();
    }
    const token = bearerToken(header);
    if (token === undefined) {
      throw workflowError("unauthenticated", "authorization must be Bearer <token>");
    }
    const known = verify.known?.(token);
    if (known !== undefined) {
      admit(known);
      return done();
    }
    verify(token).then((principal) => {
      try {
        admit(principal);
      } catch (error) {
        return done(error as Error);
      }
      done();
    }, done);
  });
}

/** The caller of an authenticated route (the hook guarantees one). */
export function principalOf(request: FastifyRequest): Principal {
  const principal = request.principal;
  if (principal === null) throw workflowError("unauthenticated", "no bearer on this request");
  return principal;
}

export function forbidden(message: string): never {
  throw workflowError("forbidden", message);
}
