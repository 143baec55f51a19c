/**
 * The MCP endpoint on the HTTP listener (`mcp.path`, off unless `mcp.enabled`), put together
 * as one Fastify plugin: its own JSON parser (numbers exact, as MCP's SDK reads plain
 * values), an `onRequest` hook that judges Origin, the connection bound and the bearer before
 * any body is read (edge.ts), then the MCP request itself (protocol.ts) on the response
 * Fastify hands over. The HTTP API's bearer hook skips this route (`bearer: "route"`): the
 * endpoint refuses with the RFC 6750 challenge and exactly one bearer, which the API does
 * not require. The listener's own bounds (header and request deadlines, body size,
 * connections) hold here as everywhere.
 */

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  type Decoder,
  isDecodeError,
  JSON_TOO_DEEP,
  object,
  optional,
} from "../../common/decode/index.ts";
import type { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";
import type { TokenVerifier } from "../auth/tokens.ts";
import type { ConfigFile } from "../config/schema.ts";
import { workflowError } from "../errors.ts";
import { toSkeinError } from "../http/errors.ts";
import { ConnectionGate, corsHeaders, originOf, preflightHeaders, signIn } from "./edge.ts";
import { parseMessage } from "./json.ts";
import { answerMcp, type McpCaller } from "./protocol.ts";
import { routesAs } from "./routes.ts";

export type McpSettings = ConfigFile["mcp"];

export interface McpEndpointRoles {
  readonly settings: McpSettings;
  readonly verify: TokenVerifier;
  readonly log: Logger;
}

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
      callers.set(request, {
        routes: routesAs(app, signedIn.token),
        scope: namespace,
        log: roles.log,
      });
    });

    const config = { bearer: "route" as const };
    scope.post(
      path,
      {
        config: {
          ...config,
          api: {
            summary: "MCP endpoint: Streamable HTTP, stateless JSON (mcp.enabled)",
            body: JSON_RPC_MESSAGE,
          },
        },
      },
      async (request, reply) => {
        const caller = callers.get(request)!;
        const origin = origins.get(request);
        reply.hijack();
        for (const [name, value] of Object.entries(corsHeaders(origin)))
          reply.raw.setHeader(name, value);
        try {
          await answerMcp(request.raw, reply.raw, request.body, caller);
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
      },
    );
    scope.route({
      method: ["GET", "DELETE"],
      url: path,
      config: {
        ...config,
        api: { summary: "MCP endpoint: 405, no server stream or session (stateless)" },
      },
      handler: (request, reply) =>
        refuse(
          reply,
          workflowError(
            "method_not_allowed",
            "the MCP endpoint is stateless: POST one JSON-RPC message",
          ),
          { ...corsHeaders(origins.get(request)), allow: "POST, OPTIONS" },
        ),
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
            allow: "POST, OPTIONS",
            ...(origin === undefined ? {} : preflightHeaders(origin)),
          })
          .send();
      },
    );
  });
}
