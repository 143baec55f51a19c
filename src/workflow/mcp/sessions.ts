/**
 * The endpoint's MCP sessions. An `initialize` without `Mcp-Session-Id` opens one: a Server
 * and the SDK's Streamable HTTP transport with a session id, kept here until the client ends
 * it (DELETE), it sits idle, or the server stops. A session answers its POSTs as SSE (so a
 * waiting tool can report progress) and offers a GET stream on which the server notifies:
 * `notifications/tools/list_changed` when a definition is registered in the session's
 * namespace (the endpoint's `?namespace=`, else the default), and
 * `notifications/resources/updated` for its subscriptions (subscriptions.ts). Both come from
 * the server's change signals, never from polling.
 *
 * A session belongs to the subject of the bearer that opened it: a request naming it with a
 * bearer of another subject is told it does not exist (404 `session_not_found`), so no other
 * caller can use, follow or end it. Each request still acts with its own bearer, and
 * notifications go out only while the latest bearer may see their namespace. The table is
 * bounded (`mcp.max_sessions`: one more `initialize` is 503 `mcp_sessions_full`) and a
 * session with no request for `mcp.session_idle_ms` ends; an open GET stream counts as use
 * until the bearer that last used the session expires (checked at each idle period).
 */

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { checkParams } from "../../common/mcp-params.ts";
import { canAccessNamespace, type Principal } from "../auth/tokens.ts";
import { workflowError } from "../errors.ts";
import { type ChangeSignals, definitionsKey } from "../runs/changes.ts";
import { type McpCaller, type McpRoles, mcpServer, SESSION_METHODS } from "./protocol.ts";
import { RunSubscriptions } from "./subscriptions.ts";

export interface SessionRoles extends McpRoles {
  readonly changes: ChangeSignals;
  /** `namespaces.default`: the namespace of a session whose URL names none. */
  readonly defaultNamespace: string | undefined;
  /** `mcp.max_sessions` and `mcp.session_idle_ms`. */
  readonly limits: { readonly max: number; readonly idleMs: number };
}

export interface Session {
  readonly id: string;
  readonly subject: string;
  readonly server: Server;
  readonly transport: StreamableHTTPServerTransport;
  /** The bearer of the session's latest request: notifications go out under its grants. */
  principal: Principal;
  /** Open GET streams (the transport keeps at most one). */
  streams: number;
  idle: NodeJS.Timeout | undefined;
  stop: () => void;
}

export class McpSessions {
  readonly #open = new Map<string, Session>();
  readonly #roles: SessionRoles;

  constructor(roles: SessionRoles) {
    this.#roles = roles;
  }

  get size(): number {
    return this.#open.size;
  }

  /** Opens a session for the `initialize` of `caller`; `mcp_sessions_full` at the bound. */
  async open(caller: McpCaller): Promise<Session> {
    const { changes, limits } = this.#roles;
    if (this.#open.size >= limits.max) {
      throw workflowError(
        "mcp_sessions_full",
        `the MCP endpoint holds mcp.max_sessions (${limits.max}) sessions; end one or retry later`,
      );
    }
    const id = randomUUID();
    const subscriptions = new RunSubscriptions(changes, (uri, namespace) => {
      if (canAccessNamespace(session.principal, namespace)) {
        void session.server.sendResourceUpdated({ uri }).catch(() => {});
      }
    });
    const server = mcpServer(this.#roles, subscriptions);
    const session: Session = {
      id,
      subject: caller.principal.subject,
      server,
      transport: new StreamableHTTPServerTransport({ sessionIdGenerator: () => id }),
      principal: caller.principal,
      streams: 0,
      idle: undefined,
      stop: () => subscriptions.close(),
    };
    const namespace = caller.scope ?? this.#roles.defaultNamespace;
    if (namespace !== undefined) {
      const unlisten = changes.listen(definitionsKey(namespace), () => {
        if (canAccessNamespace(session.principal, namespace)) {
          void server.sendToolListChanged().catch(() => {});
        }
      });
      session.stop = () => {
        unlisten();
        subscriptions.close();
      };
    }
    session.idle = setTimeout(() => this.#idle(session), limits.idleMs);
    session.idle.unref();
    // However it closes (DELETE, expiry, the server's stop), the table forgets it.
    server.onclose = () => this.#forget(session);
    this.#open.set(id, session);
    await server.connect(session.transport);
    checkParams(session.transport, SESSION_METHODS);
    return session;
  }

  /** The open session `id` of `subject`; undefined for an unknown id or another subject's. */
  find(id: string, subject: string): Session | undefined {
    const session = this.#open.get(id);
    return session?.subject === subject ? session : undefined;
  }

  /** Answers one request of the session (POST, GET stream, DELETE) as `caller`. */
  async answer(
    session: Session,
    caller: McpCaller,
    request: IncomingMessage,
    response: ServerResponse,
    body: unknown,
  ): Promise<void> {
    session.principal = caller.principal;
    session.idle?.refresh();
    if (request.method === "GET") {
      session.streams++;
      response.once("close", () => {
        session.streams--;
        session.idle?.refresh();
      });
    }
    await session.transport.handleRequest(request, response, body);
    // An initialize the transport refused leaves no session to keep.
    if (session.transport.sessionId === undefined) await this.end(session);
  }

  end(session: Session): Promise<void> {
    return session.server.close();
  }

  /** Ends every session (the server is stopping): their GET streams close. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#open.values()].map((session) => this.end(session)));
  }

  #idle(session: Session): void {
    const listening = session.streams > 0 && Date.now() < session.principal.expiresAt * 1000;
    if (listening) session.idle?.refresh();
    else void this.end(session);
  }

  #forget(session: Session): void {
    if (this.#open.get(session.id) !== session) return;
    this.#open.delete(session.id);
    clearTimeout(session.idle);
    session.stop();
  }
}
