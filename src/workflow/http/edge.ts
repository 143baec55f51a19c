/**
 * The HTTP listener's edge: the bounds that keep a client from holding the server's sockets
 * (timeouts for headers, whole requests, keep-alive and idle sockets; a connection cap) and
 * the refusals given before a request reaches a route — by Node's HTTP parser (400, 408,
 * 413, 431), by Fastify's router (a bad percent-escape, a path segment too long), by Node's
 * `Expect` handling (417) and while the server stops (503). Each answers with the one error
 * body, `{"error":{"code","message"}}`, like every route does.
 *
 * Node 24 starts the headers clock when a connection is accepted, so `headersTimeout` also
 * closes a connection that never sends a byte (checked every CONNECTIONS_CHECK_INTERVAL_MS).
 * Upgrade requests (the agent transport) pass through the same parser, so the same header
 * timeout applies to them until the WebSocket takes the socket over.
 */

import type { Duplex } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { SkeinError } from "../../common/errors.ts";
import { MAX_DEPLOYMENT_NAME_BYTES } from "../deployments/record.ts";
import { workflowError } from "../errors.ts";
import { rawRefusal } from "./errors.ts";

/** Bounds an operator may set (`http.max_connections`, `http.headers_timeout_ms`). */
export interface ListenerLimits {
  readonly maxConnections: number;
  readonly headersTimeoutMs: number;
}

/**
 * The longest a whole request (headers and body) may take to arrive: Node's own default,
 * enough for `http.max_body_bytes` at its default over a slow link; a body trickled slower
 * than that holds a connection for no purpose. Responses (long polls) are not counted.
 */
export const REQUEST_TIMEOUT_MS = 300_000;

/**
 * How long a kept-alive connection may sit idle between requests. Longer than the 60 s
 * idle timeout of common load balancers (Fastify's default, for that reason), so the server
 * never closes a connection a proxy is about to reuse.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * How long a connection may go with no byte in either direction while a request is in
 * progress (a client that stops reading its response). Above the longest legitimate
 * silence, a describe long poll (DESCRIBE_WAIT_MAX_MS, 60 s).
 */
export const SOCKET_IDLE_TIMEOUT_MS = 120_000;

/** How often Node checks the header and request timeouts; their precision. */
export const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

/**
 * The longest path parameter routed: a deployment name of MAX_DEPLOYMENT_NAME_BYTES, each
 * byte percent-encoded. Longer is 414 `uri_too_long` (Fastify's default, 100, cut names short).
 */
export const MAX_PARAM_LENGTH = 3 * MAX_DEPLOYMENT_NAME_BYTES;

/** The Fastify options that bound the listener; handed to `Fastify(...)`. */
export function listenerOptions(limits: ListenerLimits) {
  return {
    // Read by Node when the server is created: the parser-level clocks.
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    },
    // Fastify sets these on the server after creating it (its defaults would undo ours).
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: SOCKET_IDLE_TIMEOUT_MS,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Requests arriving during a stop are refused by `installEdge`, with the error body.
    return503OnClosing: false,
    clientErrorHandler,
    frameworkErrors,
  };
}

/** The connection cap, `Expect` refusals and the stop refusal; install before auth. */
export function installEdge(app: FastifyInstance, limits: ListenerLimits): void {
  // Past the cap Node closes each new connection as soon as it is accepted.
  app.server.maxConnections = limits.maxConnections;
  app.server.on("checkExpectation", (_request, response) => {
    const refusal = workflowError("expectation_failed", "only `expect: 100-continue` is supported");
    const body = JSON.stringify({ error: refusal.toJSON() });
    response.writeHead(refusal.status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
    });
    response.end(body);
  });
  let stopping = false;
  app.addHook("preClose", async () => {
    stopping = true;
  });
  // A callback hook, run for every request: an async one costs a promise and a microtask turn.
  app.addHook("onRequest", (_request, _reply, done) => {
    if (stopping) {
      throw workflowError("shutting_down", "the server is stopping; retry against it later");
    }
    done();
  });
}

/** What Node's parser refused, by its error code; anything else is a bad request. */
function parserRefusal(error: NodeJS.ErrnoException & { reason?: string }): SkeinError {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return workflowError("request_timeout", "the request did not arrive in time");
    case "HPE_HEADER_OVERFLOW":
      return workflowError("headers_too_large", "the request line and headers are too large");
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return workflowError("body_too_large", "the body's chunk extensions are too large");
    default:
      // llhttp's reasons are fixed texts ("Invalid header value char"), never the request's.
      return workflowError(
        "bad_request",
        `the request is not valid HTTP/1.1${error.reason === undefined ? "" : `: ${error.reason}`}`,
      );
  }
}

/** Node's `clientError`: answer with the error body when nothing was sent yet, then close. */
function clientErrorHandler(error: Error, socket: Duplex): void {
  if ((error as NodeJS.ErrnoException).code === "ECONNRESET" || socket.destroyed) return;
  const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && started?.headersSent !== true) {
    socket.write(rawRefusal(parserRefusal(error)));
  }
  socket.destroy();
}

/** Fastify's router refusals (before any hook runs), with the error body. */
function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  let refusal: SkeinError;
  if (error.code === "FST_ERR_BAD_URL") {
    refusal = workflowError("malformed_url", "the URL has an invalid percent-escape");
  } else if (error.code === "FST_ERR_MAX_PARAM_LENGTH") {
    refusal = workflowError(
      "uri_too_long",
      `a path segment is longer than ${MAX_PARAM_LENGTH} characters`,
    );
  } else {
    reply.log.error({ err: error }, "request failed in the router");
    refusal = workflowError("internal", "internal error; see the server log");
  }
  reply.status(refusal.status).send({ error: refusal.toJSON() });
}
