/**
 * What the MCP endpoint judges before a request reaches the MCP protocol, in the order a
 * caller fixes them: the Origin (an omitted one is admitted, a present one must be one of
 * `mcp.allowed_origins` exactly), the connection (at most `mcp.max_connections` carry MCP
 * requests), then exactly one well-formed `Authorization: Bearer` that this server verifies.
 * A 401 carries the RFC 6750 challenge; with an allowed Origin every answer carries the CORS
 * headers a browser-based client needs to read it. Refusals never quote a header value.
 */

import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { SkeinError } from "../../common/errors.ts";
import { bearerToken } from "../auth/bearer.ts";
import type { Principal, TokenVerifier } from "../auth/tokens.ts";
import { workflowError } from "../errors.ts";

/** Request headers a browser-based MCP client sends (the CORS preflight allows them). */
const CLIENT_HEADERS =
  "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id";

/** How long a browser may reuse a preflight answer. */
const PREFLIGHT_MAX_AGE_S = 600;

/** The Origin header when present and allowed; undefined when absent; null when refused. */
export function originOf(
  request: IncomingMessage,
  allowed: ReadonlySet<string>,
): string | undefined | null {
  const origins = request.headersDistinct.origin;
  if (origins === undefined) return undefined;
  // Two Origin headers are not one origin: refused like an unknown one.
  return origins.length === 1 && allowed.has(origins[0]!) ? origins[0]! : null;
}

/** CORS answer headers for an allowed Origin (none without one). */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return {};
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": "www-authenticate, mcp-session-id",
    vary: "origin",
  };
}

/** The answer to a browser's preflight from an allowed Origin. */
export function preflightHeaders(origin: string): Record<string, string> {
  return {
    ...corsHeaders(origin),
    "access-control-allow-methods": "POST, GET, DELETE",
    "access-control-allow-headers": CLIENT_HEADERS,
    "access-control-max-age": String(PREFLIGHT_MAX_AGE_S),
  };
}

/** The single bearer of the request, or undefined for none, several or a malformed one. */
export function singleBearer(request: IncomingMessage): string | undefined {
  // Node's `headers` keeps the first Authorization only; `headersDistinct` keeps them all.
  const values = request.headersDistinct.authorization;
  if (values === undefined || values.length !== 1) return undefined;
  return bearerToken(values[0]);
}

/** The caller, or a 401 refusal with its challenge (`invalid_token` when one was refused). */
export async function signIn(
  request: IncomingMessage,
  verify: TokenVerifier,
): Promise<{ token: string; principal: Principal } | { refusal: SkeinError; challenge: string }> {
  const token = singleBearer(request);
  if (token === undefined) {
    return {
      refusal: workflowError(
        "unauthenticated",
        "the MCP endpoint needs exactly one authorization: Bearer <token>",
      ),
      challenge: "Bearer",
    };
  }
  try {
    return { token, principal: await verify(token) };
  } catch (error) {
    const refusal =
      (error as SkeinError).code === "unauthenticated"
        ? (error as SkeinError)
        : workflowError("unauthenticated", "bearer token refused", error);
    return { refusal, challenge: 'Bearer error="invalid_token"' };
  }
}

/**
 * The connections carrying MCP requests: one counts from its first MCP request until it
 * closes, so the bound holds agents (each keeps a connection) rather than single requests.
 */
export class ConnectionGate {
  readonly #held = new Set<Socket>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** Admits the request's connection; false when the bound is reached by others. */
  admit(socket: Socket): boolean {
    if (this.#held.has(socket)) return true;
    if (this.#held.size >= this.#max) return false;
    this.#held.add(socket);
    socket.once("close", () => this.#held.delete(socket));
    return true;
  }

  get size(): number {
    return this.#held.size;
  }
}
