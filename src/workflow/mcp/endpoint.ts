/**
 * The MCP endpoint on the HTTP listener (`mcp.path`, off unless `mcp.enabled`), put together
 * as one Fastify plugin: its own JSON parser (numbers exact, as MCP's SDK reads plain
 * values), an `onRequest` hook that judges Origin, the connection bound and the bearer before
 * any body is read (edge.ts), then the MCP request itself on the response Fastify hands
 * over: a request naming a session (`Mcp-Session-Id`) goes to that session of its caller's
 * subject (sessions.ts), an `initialize` without one opens a session, and any other message
 * is answered statelessly (protocol.ts). The HTTP API's bearer hook skips this route (`bearer: "route"`): the
 * endpoint refuses with the RFC 6750 challenge and exactly one bearer, which the API does
 * not require. The listener's own bounds (header and request deadlines, body size,
 * connections) hold here as everywhere.
 */

import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  type Decoder,
  isDecodeError,
  JSON_TOO_DEEP,
  object,
  optional,
} from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";
import type { TokenVerifier } from "../auth/tokens.ts";
import type { ConfigFile } from "../config/schema.ts";
import { workflowError } from "../errors.ts";
import { toSkeinError } from "../http/errors.ts";
import type { ToolMeter } from "../metrics/mcp-tools.ts";
import type { ChangeSignals } from "../runs/changes.ts";
import { ConnectionGate, corsHeaders, originOf, preflightHeaders, signIn } from "./edge.ts";
import { parseMessage } from "./json.ts";
import { answerMcp, authInfo, type McpCaller } from "./protocol.ts";
import { McpSessions, type Session } from "./sessions.ts";

export type McpSettings = ConfigFile["mcp"];

export interface McpEndpointRoles {
  readonly settings: McpSettings;
  readonly verify: TokenVerifier;
  readonly log: Logger;
  readonly meter: ToolMeter;
  /** What wakes sessions: registrations (list_changed) and run commits (subscriptions). */
  readonly changes: ChangeSignals;
  readonly defaultNamespace: string | undefined;
  /** Hands the metrics the count of open sessions, read at each scrape. */
  readonly observeSessions: (open: () => number) => void;
}

const SESSION_HEADER = "mcp-session-id";

/** The `Mcp-Session-Id` the request names, if any. */
function sessionIdOf(request: FastifyRequest): string | undefined {
  const value = request.headers[SESSION_HEADER];
  return typeof value === "string" ? value : undefined;
}

const sessionNotFound = () =>
  workflowError(
    "session_not_found",
    "no open MCP session of this bearer has that Mcp-Session-Id; initialize a new one",
  );

/** The endpoint URL's query: `?namespace=` names the namespace its run tools come from. */
const scopeQuery = object({ namespace: optional(namespaceName()) });

const JSON_RPC_MESSAGE: Decoder<unknown> = {
  expected: "JSON-RPC 2.0 message (or batch)",
  run: (value) => value,
  schema: { type: ["object", "array"], description: "a JSON-RPC 2.0 message of MCP" },
};

function refuse(reply: FastifyReply, refusal: SkeinError, headers: Record<string, string> = {}) {
  return reply.code(refusal.status).headers(headers).send({ error: refusal.toJSON() });
}

export function installMcp(app: FastifyInstance, roles: McpEndpointRoles): void {
  const { path, max_connections } = roles.settings;
  const allowed = new Set(roles.settings.allowed_origins);
  const gate = new ConnectionGate(max_connections);
  const callers = new WeakMap<FastifyRequest, McpCaller>();
  const origins = new WeakMap<FastifyRequest, string>();
  const mcp = { app, log: roles.log, meter: roles.meter };
  const sessions = new McpSessions({
    ...mcp,
    changes: roles.changes,
    defaultNamespace: roles.defaultNamespace,
    limits: { max: roles.settings.max_sessions, idleMs: roles.settings.session_idle_ms },
  });
  roles.observeSessions(() => sessions.size);
  // Sessions' GET streams end as the server begins to stop, so they never hold its close.
  app.addHook("preClose", () => sessions.closeAll());

  /** Hands the request to the MCP transport: a session's, or a stateless one. */
  async function answer(request: FastifyRequest, reply: FastifyReply, session?: Session) {
    const caller = callers.get(request)!;
    reply.hijack();
    for (const [name, value] of Object.entries(corsHeaders(origins.get(request))))
      reply.raw.setHeader(name, value);
    // Every handler acts as this request's caller (the SDK's authInfo).
    (request.raw as { auth?: unknown }).auth = authInfo(caller);
    try {
      if (session === undefined) await answerMcp(request.raw, reply.raw, request.body, mcp);
      else await sessions.answer(session, caller, request.raw, reply.raw, request.body);
    } catch (error) {
      roles.log.error({ err: error }, "an MCP request failed");
      if (!reply.raw.headersSent) {
        const refusal = workflowError("internal", "internal error; see the server log");
        reply.raw.writeHead(refusal.status, {
          "content-type": "application/json; charset=utf-8",
        });
        reply.raw.end(JSON.stringify({ error: refusal.toJSON() }));
      } else reply.raw.destroy();
    }
  }

  /** The session the request names, or the refusal when none of its caller's has that id. */
  function namedSession(request: FastifyRequest, id: string): Session | SkeinError {
    return sessions.find(id, callers.get(request)!.principal.subject) ?? sessionNotFound();
  }

  app.register(async (scope) => {
    if (app.hasRoute({ method: "POST", url: path }) || app.hasRoute({ method: "GET", url: path })) {
      throw workflowError("config_invalid", `mcp.path ${path} is already a route of the HTTP API`);
    }
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      "application/json",
      { parseAs: "string" },
      (_request, body, done) => {
        try {
          done(null, parseMessage(body as string));
        } catch (error) {
          if (!isDecodeError(error)) throw error;
          done(
            error.code === JSON_TOO_DEEP
              ? workflowError("json_too_deep", `request body ${error.reason}`)
              : workflowError("malformed_json", `request body is ${error.reason}`),
            undefined,
          );
        }
      },
    );

    // Before the body is read: a caller refused here makes the server parse nothing.
    scope.addHook("onRequest", async (request, reply) => {
      const origin = originOf(request.raw, allowed);
      if (origin === null) {
        return refuse(
          reply,
          workflowError(
            "origin_not_allowed",
            "the Origin header is not one of mcp.allowed_origins",
          ),
        );
      }
      if (origin !== undefined) origins.set(request, origin);
      const cors = corsHeaders(origin);
      if (request.method === "OPTIONS") return;
      if (!gate.admit(request.raw.socket)) {
        return refuse(
          reply,
          workflowError(
            "mcp_connections_full",
            "the MCP endpoint holds mcp.max_connections connections",
          ),
          { ...cors, connection: "close" },
        );
      }
      const signedIn = await signIn(request.raw, roles.verify);
      if ("refusal" in signedIn) {
        return refuse(reply, signedIn.refusal, { ...cors, "www-authenticate": signedIn.challenge });
      }
      const query = new URL(request.url, "http://mcp.invalid").searchParams;
      let namespace: string | undefined;
      try {
        const values: Record<string, unknown> = {};
        for (const key of new Set(query.keys())) {
          const all = query.getAll(key);
          values[key] = all.length === 1 ? all[0] : all;
        }
        namespace = scopeQuery.run(values, undefined).namespace;
      } catch (error) {
        return refuse(reply, toSkeinError(error), cors);
      }
      callers.set(request, { ...signedIn, scope: namespace });
    });

    const config = { bearer: "route" as const };
    scope.post(
      path,
      {
        config: {
          ...config,
          api: {
            summary: "MCP endpoint: Streamable HTTP, stateless JSON or a session (mcp.enabled)",
            body: JSON_RPC_MESSAGE,
          },
        },
      },
      async (request, reply) => {
        const cors = corsHeaders(origins.get(request));
        const id = sessionIdOf(request);
        if (id !== undefined) {
          const session = namedSession(request, id);
          if (session instanceof SkeinError) return refuse(reply, session, cors);
          return answer(request, reply, session);
        }
        // Only a well-formed initialize opens a session; any other message without one is
        // stateless (there an initialize whose params do not fit is answered -32602).
        if (!isInitializeRequest(request.body)) {
          return answer(request, reply);
        }
        let session: Session;
        try {
          session = await sessions.open(callers.get(request)!);
        } catch (error) {
          return refuse(reply, toSkeinError(error), cors);
        }
        return answer(request, reply, session);
      },
    );
    scope.route({
      method: ["GET", "DELETE"],
      url: path,
      config: {
        ...config,
        api: {
          summary:
            "MCP endpoint: a session's server stream (GET) or its end (DELETE); 405 without a session",
        },
      },
      handler: (request, reply) => {
        const cors = corsHeaders(origins.get(request));
        const id = sessionIdOf(request);
        if (id === undefined) {
          return refuse(
            reply,
            workflowError(
              "method_not_allowed",
              "without an Mcp-Session-Id the MCP endpoint is stateless: POST one JSON-RPC message",
            ),
            { ...cors, allow: "POST, OPTIONS" },
          );
        }
        const session = namedSession(request, id);
        if (session instanceof SkeinError) return refuse(reply, session, cors);
        return answer(request, reply, session);
      },
    });
    scope.options(
      path,
      {
        config: {
          public: true,
          api: { summary: "MCP endpoint: CORS preflight of an allowed Origin" },
        },
      },
      (request, reply) => {
        const origin = origins.get(request);
        return reply
          .code(204)
          .headers({
            allow: "POST, GET, DELETE, OPTIONS",
            ...(origin === undefined ? {} : preflightHeaders(origin)),
          })
          .send();
      },
    );
  });
}
