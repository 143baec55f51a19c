/**
 * How a tool reaches the server: by calling the HTTP route it mirrors, in process
 * (`app.inject`), with the caller's own bearer. So a tool is decoded, authorized (the same
 * namespace grants, the same 401/403), routed in a cluster and refused exactly as the route
 * is — there is no second copy of any of that — and the MCP endpoint has no authority of its
 * own. A route's refusal comes back as a SkeinError with the route's code and status.
 */

import type { FastifyInstance } from "fastify";
import { SkeinError } from "../../common/errors.ts";
import { parseAnswer } from "./json.ts";

export interface RouteAnswer {
  /** The answer's JSON text, as the route wrote it. */
  readonly text: string;
  /** The same, parsed (numbers exact). */
  // biome-ignore lint/suspicious/noExplicitAny: each tool reads the fields of its own route
  readonly value: any;
}

/** Calls one route as the caller; throws the route's refusal. */
export type RouteCall = (
  method: "GET" | "POST",
  url: string,
  body?: unknown,
) => Promise<RouteAnswer>;

export function routesAs(app: FastifyInstance, token: string): RouteCall {
  return async (method, url, body) => {
    const response = await app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const text = response.body;
    const value = text === "" ? undefined : parseAnswer(text);
    if (response.statusCode === 200) return { text, value };
    const error = (value as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    if (typeof error?.code === "string" && typeof error.message === "string") {
      throw new SkeinError(error.code, error.message, { status: response.statusCode });
    }
    throw new SkeinError("internal", "internal error; see the server log", { status: 500 });
  };
}

/** A query string of the defined values, for GET routes. */
export function query(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined) params.set(k, v);
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
