/**
 * Wires skein-idp: opens the data directory (SQLite state, signing keys), listens, builds
 * the oidc-provider side for the real issuer (known only once the port is), and routes
 * requests: AuthZEN and placement to their handlers, the login page to login.ts, everything
 * else (discovery, JWKS, authorize, token, …) to oidc-provider. `startIdp` resolves when the
 * server listens; `close` stops it and closes the database.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SkeinError } from "../common/errors.ts";
import type { Logger } from "../common/log.ts";
import {
  AUTHZEN_CONFIGURATION_PATH,
  AuthzenRoutes,
  authzenConfiguration,
  EVALUATION_PATH,
  EVALUATIONS_PATH,
} from "./authzen/routes.ts";
import {
  ACCESS_TOKEN_TTL_SECONDS,
  HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
} from "./bounds.ts";
import { CallerAuthenticator } from "./caller.ts";
import { dbFile, ensureDataDir, type KeyFile, loadOrCreateKeys } from "./data-dir.ts";
import { idpError } from "./errors.ts";
import { sendError, sendJson } from "./http/io.ts";
import { LoginRoutes } from "./oidc/login.ts";
import { createProvider, INTERACTION_PATH } from "./oidc/provider.ts";
import { PLACEMENT_PREFIX, PlacementRoutes } from "./placement/routes.ts";
import { openIdpDatabase } from "./state/database.ts";
import { IdpState } from "./state/state.ts";

export interface IdpOptions {
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  /** The public issuer when it differs from http://HOST:PORT (behind a proxy). */
  readonly issuer?: string;
  /** Access token lifetime (default ACCESS_TOKEN_TTL_SECONDS). */
  readonly passTtlSeconds?: number;
  readonly log: Logger;
}

export interface RunningIdp {
  readonly issuer: string;
  close(): Promise<void>;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

export async function startIdp(options: IdpOptions): Promise<RunningIdp> {
  ensureDataDir(options.dataDir);
  const keys = await loadOrCreateKeys(options.dataDir);
  const db = openIdpDatabase(dbFile(options.dataDir));
  const state = new IdpState(db);
  let route: Handler | undefined;
  const server = createServer((request, response) => {
    if (route === undefined) return void sendError(response, idpError("internal_error"));
    route(request, response).catch((caught: unknown) => {
      const error = fromProvider(caught);
      if (!(error instanceof SkeinError) || error.status >= 500) {
        options.log.error({ err: describe(error) }, "request failed");
      }
      if (!response.headersSent) sendError(response, error);
      else response.destroy();
    });
  });
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  try {
    await listen(server, options.host, options.port);
  } catch (error) {
    db.close();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const issuer = options.issuer ?? `http://${host}:${address.port}`;
  route = buildRoutes(
    issuer,
    state,
    keys,
    options.log,
    options.passTtlSeconds ?? ACCESS_TOKEN_TTL_SECONDS,
  );
  options.log.info({ issuer }, "listening");
  return {
    issuer,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      db.close();
    },
  };
}

/** oidc-provider's own refusals (an expired or unknown login interaction, …) keep their
 * status and OAuth error code; anything else stays as it was. */
function fromProvider(error: unknown): unknown {
  const e = error as { statusCode?: unknown; error?: unknown; error_description?: unknown };
  if (typeof e?.statusCode !== "number" || typeof e.error !== "string" || e.statusCode >= 500) {
    return error;
  }
  const message = typeof e.error_description === "string" ? e.error_description : e.error;
  return new SkeinError(e.error, message, { status: e.statusCode });
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function buildRoutes(
  issuer: string,
  state: IdpState,
  keys: KeyFile,
  log: Logger,
  passTtlSeconds: number,
): Handler {
  const provider = createProvider(issuer, state, keys, passTtlSeconds);
  watchProvider(provider, log);
  const callers = new CallerAuthenticator(issuer, state, keys.signing);
  const event = (fields: Record<string, unknown>, message: string) => log.info(fields, message);
  const authzen = new AuthzenRoutes(state, callers);
  const placement = new PlacementRoutes(state, callers, event);
  const login = new LoginRoutes(provider, state, event);
  const oidc = provider.callback();
  const configuration = authzenConfiguration(issuer);
  const only = (method: string, request: IncomingMessage) => {
    if (request.method !== method) throw idpError("method_not_allowed");
  };
  return async (request, response) => {
    const url = request.url ?? "/";
    const path = url.split("?", 1)[0]!;
    if (path === AUTHZEN_CONFIGURATION_PATH) {
      only("GET", request);
      return sendJson(response, 200, configuration);
    }
    if (path === EVALUATION_PATH) {
      only("POST", request);
      return authzen.evaluation(request, response);
    }
    if (path === EVALUATIONS_PATH) {
      only("POST", request);
      return authzen.evaluations(request, response);
    }
    if (path.startsWith(PLACEMENT_PREFIX)) {
      return placement.handle(request, response, path.slice(PLACEMENT_PREFIX.length));
    }
    if (path.startsWith(INTERACTION_PATH)) {
      const rest = path.slice(INTERACTION_PATH.length).split("/");
      if (rest.length === 1) {
        only("GET", request);
        return login.show(request, response);
      }
      if (rest.length === 2 && rest[1] === "login") {
        only("POST", request);
        return login.login(request, response);
      }
      throw idpError("not_found");
    }
    oidc(request, response);
  };
}

/** oidc-provider's own failures: logged by error code and client, never with parameters. */
function watchProvider(provider: ReturnType<typeof createProvider>, log: Logger): void {
  provider.on("server_error", (_ctx: unknown, error: Error) => {
    log.error({ err: describe(error) }, "oidc-provider failed");
  });
  const on = provider.on.bind(provider) as (
    event: string,
    listener: (
      ctx: { oidc?: { client?: { clientId?: string } } },
      error: { error?: string },
    ) => void,
  ) => void;
  for (const name of ["grant.error", "authorization.error", "revocation.error"]) {
    on(name, (ctx, error) => {
      log.info(
        { event: name, error: error.error, client: ctx.oidc?.client?.clientId },
        "request refused",
      );
    });
  }
}
