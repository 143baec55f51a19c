/**
 * The HTTP MCP endpoint put together: the loopback listener (`max_connections`, the header
 * deadline), the edge's checks in the order a caller fixes them (route, Origin, bearer,
 * method, body), the caller's store connection from the pass pool (a pass the store refuses
 * is a 401 with `error="invalid_token"`), then the MCP request itself.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { isCodedError, SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import type { McpHttpPolicy } from "../config/types.ts";
import { type LoopbackHttp, startLoopbackHttp } from "../loopback-http.ts";
import { bearerOf, challenge, originAllowed, readJsonBody, sendRefusal } from "./edge.ts";
import { MCP_STORE_CONNECTIONS_MAX, PassPool } from "./pool.ts";
import { answerMcp } from "./protocol.ts";
import { MCP_REFUSALS, mcpRefusal } from "./refusals.ts";

export interface McpHttpOptions {
  readonly policy: McpHttpPolicy;
  /** The store's socket: every tool call goes there, with the caller's pass. */
  readonly socketPath: string;
  /** The store's `max_clients`: the pool keeps at most half of it. */
  readonly storeMaxClients: number;
  readonly log: Logger;
}

/** Refusals of the pass at hello: the caller must sign in again, so a 401. */
const PASS_REFUSALS = new Set([
  "pass_required",
  "pass_invalid",
  "pass_expired",
  "pass_foreign_issuer",
  "pass_wrong_audience",
]);

export async function startMcpHttp(options: McpHttpOptions): Promise<LoopbackHttp> {
  const { policy, log } = options;
  const pool = new PassPool({
    socketPath: options.socketPath,
    maxConnections: Math.max(
      1,
      Math.min(MCP_STORE_CONNECTIONS_MAX, Math.floor(options.storeMaxClients / 2)),
    ),
  });
  const unauthorized = (response: ServerResponse, invalidToken = false) =>
    sendRefusal(response, mcpRefusal(invalidToken ? "pass_refused" : "bearer_required"), {
      "www-authenticate": challenge(policy.resource_metadata_url, invalidToken),
    });

  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    if (!originAllowed(request, policy.allowed_origins)) {
      return sendRefusal(response, mcpRefusal("origin_not_allowed"));
    }
    const pass = bearerOf(request);
    if (pass === undefined) return unauthorized(response);
    if (request.method !== "POST") {
      return sendRefusal(response, mcpRefusal("method_not_allowed"), { allow: "POST" });
    }
    const body = await readJsonBody(request, Number(policy.body_timeout_ms));
    let lease: Awaited<ReturnType<PassPool["acquire"]>>;
    try {
      lease = await pool.acquire(pass);
    } catch (error) {
      if (!isCodedError(error) || Object.hasOwn(MCP_REFUSALS, error.code)) throw error;
      if (PASS_REFUSALS.has(error.code)) return unauthorized(response, true);
      // The store refused the connection itself (max_clients, idp_unavailable, a timeout).
      throw mcpRefusal("store_unavailable", `the store refused the connection (${error.code})`);
    }
    response.once("close", () => lease.release());
    await answerMcp(request, response, body, lease.client);
  };

  const fail = (response: ServerResponse, error: unknown) => {
    if (error instanceof SkeinError) {
      // A body that never finished leaves the connection unusable: close it after the answer.
      const close = error.code === "body_timeout" || error.code === "body_too_large";
      sendRefusal(response, error, close ? { connection: "close" } : {});
      return;
    }
    log.error({ err: isCodedError(error) ? error.code : String(error) }, "mcp request failed");
    sendRefusal(response, new SkeinError("internal_error", "the request failed", { status: 500 }));
  };

  const http = await startLoopbackHttp({
    listen: policy.listen,
    maxConnections: policy.max_connections,
    headerTimeoutMs: Number(policy.header_timeout_ms),
    log,
    service: "mcp-http",
    handler: (request, response) => {
      const path = (request.url ?? "").split("?")[0];
      if (path !== policy.path) return false;
      serve(request, response).catch((error: unknown) => fail(response, error));
      return true;
    },
  });
  return {
    host: http.host,
    port: http.port,
    async close() {
      await http.close();
      await pool.close();
    },
  };
}
