/**
 * The OpenAPI 3.1 description of this HTTP API, made from the routes as Fastify registers
 * them: an `onRoute` hook (installed before any route) sees every route, and each route's
 * `config.api` names its summary and the very decoder its handler runs on the body, whose
 * JSON Schema (common/decode) becomes the request body schema. Nothing is written twice: a
 * route added without `config.api` still appears, marked `x-skein-undocumented`, and the
 * OpenAPI test fails on it. `GET /openapi.json` serves the document, built once on first
 * request (every route is registered by then). The agent transport's WebSocket upgrade is
 * not a route and is described in docs/agents.md instead.
 */

import type { FastifyInstance } from "fastify";
import { type Decoder, type JsonSchema, schemaOf } from "../../common/decode/index.ts";
import { VERSION } from "../../common/version.ts";
import { ERRORS } from "../errors.ts";

/** What a route says about itself for the OpenAPI document. */
export interface RouteDoc {
  readonly summary: string;
  /** The decoder the handler runs on the JSON body. */
  readonly body?: Decoder<unknown>;
  /** The 200 answer's schema, when the route declares one. */
  readonly response?: JsonSchema;
  /** The 200 answer's media type (default `application/json`). */
  readonly responseType?: string;
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** This route in the OpenAPI document (`/openapi.json`). */
    api?: RouteDoc;
  }
}

interface SeenRoute {
  readonly method: string;
  readonly url: string;
  readonly api: RouteDoc | undefined;
  readonly public: boolean;
}

const ERROR_BODY: JsonSchema = {
  type: "object",
  properties: {
    error: {
      type: "object",
      properties: { code: { type: "string" }, message: { type: "string" } },
      required: ["code", "message"],
    },
  },
  required: ["error"],
};

/** `/worker-deployments/:name` → `/worker-deployments/{name}` and its parameter names. */
function openApiPath(url: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

function operation(route: SeenRoute, params: string[]) {
  const api = route.api;
  const errors = Object.fromEntries(
    [...new Set(Object.values(ERRORS) as number[])]
      .filter((status) => status >= 400)
      .sort()
      .map((status) => [String(status), { $ref: "#/components/responses/Error" }]),
  );
  return {
    // A wildcard segment (`/ui/*`) is named, so it does not collide with its parent (`/ui`).
    operationId: `${route.method.toLowerCase()}${route.url.replaceAll("*", "All").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
    summary: api?.summary ?? "undocumented route",
    ...(api === undefined ? { "x-skein-undocumented": true } : {}),
    ...(route.public ? { security: [] } : {}),
    ...(params.length === 0
      ? {}
      : {
          parameters: params.map((name) => ({
            name,
            in: "path",
            required: true,
            schema: { type: "string" },
          })),
        }),
    ...(api?.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            content: { "application/json": { schema: schemaOf(api.body) } },
          },
        }),
    responses: {
      "200": {
        description: "success",
        content: { [api?.responseType ?? "application/json"]: { schema: api?.response ?? {} } },
      },
      ...errors,
    },
  };
}

/** The OpenAPI 3.1 document of the routes seen. */
export function openApiDocument(routes: readonly SeenRoute[]): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const { path, params } = openApiPath(route.url);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route, params);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Skein workflow server",
      version: VERSION,
      description: "Generated from the server's routes and request decoders; see docs/http-api.md.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      schemas: { Error: ERROR_BODY },
      responses: {
        Error: {
          description: "a refusal: the code names it (docs/http-api.md lists every code)",
          content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
        },
      },
    },
  };
}

/**
 * Watches every route registered from now on and serves the document at `/openapi.json`.
 * Call before any route is added.
 */
export function installOpenApi(app: FastifyInstance): void {
  const routes: SeenRoute[] = [];
  app.addHook("onRoute", (options) => {
    const methods = Array.isArray(options.method) ? options.method : [options.method];
    for (const method of methods) {
      // Fastify adds a HEAD route beside each GET; the GET describes both.
      if (method === "HEAD") continue;
      routes.push({
        method,
        url: options.url,
        api: options.config?.api,
        public: options.config?.public === true,
      });
    }
  });
  let document: JsonSchema | undefined;
  app.get(
    "/openapi.json",
    {
      config: { api: { summary: "This API's OpenAPI 3.1 document", response: { type: "object" } } },
    },
    async () => {
      document ??= openApiDocument(routes);
      return document;
    },
  );
}
