/**
 * The door's routes on its loopback listener: the sign-in flow (`/signin`, `/callback`,
 * `/signout`), the console API (`/api/session`, `/api/call`: one store verb with the
 * signed-in user's pass; the identity provider decides the act), and the console's static
 * files. State-changing calls need the session's CSRF token in `x-csrf-token` and, when the
 * browser sends one, an `Origin` equal to the configured origin.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { DOOR_CALLBACK_PATH } from "../config/limits.ts";
import type { ConsoleAssets } from "./assets.ts";
import { PENDING_SIGNIN_TTL_MS } from "./bounds.ts";
import {
  answerTooLarge,
  BodyTooLarge,
  CONSOLE_CSP,
  cookie,
  cookies,
  HttpRefusal,
  readBody,
  send,
  sendError,
  sendJson,
  sendPage,
} from "./http.ts";
import type { DoorIssuer, Pass } from "./issuer.ts";
import { SESSION_COOKIE, SIGNIN_COOKIE } from "./names.ts";
import { returnTarget } from "./return-to.ts";
import { type PendingSignIns, randomToken, type Session, type Sessions } from "./sessions.ts";
import type { DoorStores } from "./stores.ts";

/** The store verbs the console uses; anything else is refused before a store is asked. */
const CONSOLE_VERBS = new Set([
  "collections.list",
  "collections.create",
  "branches.list",
  "branches.create",
  "branches.delete",
  "branches.merge",
  "branches.revert",
  "tags.create",
  "tags.list",
  "tags.delete",
  "history.list",
  "changes.list",
  "document.get",
  "document.list",
  "document.put",
  "document.delete",
  "store.stats",
  "query.run",
]);

/** Verbs whose commits the door signs with the user's name: the history shows who did it. */
const AUTHORED = new Set([
  "document.put",
  "document.delete",
  "collections.create",
  "branches.merge",
  "branches.revert",
  "tags.create",
]);

/** A pass this close to its expiry is renewed (or refused) rather than sent to die mid-call. */
const PASS_MARGIN_MS = 30_000;

export interface DoorAppDeps {
  readonly origin: string;
  readonly issuer: DoorIssuer;
  readonly stores: DoorStores;
  readonly pending: PendingSignIns;
  readonly sessions: Sessions;
  readonly assets: ConsoleAssets;
  readonly log: Logger;
}

export function doorHandler(deps: DoorAppDeps) {
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    route(deps, request, response).catch((error: unknown) => {
      if (error instanceof BodyTooLarge) {
        if (!response.headersSent) answerTooLarge(request, response, error);
        return;
      }
      if (error instanceof HttpRefusal) {
        const close: Record<string, string> = error.closes ? { connection: "close" } : {};
        if (!response.headersSent)
          sendError(response, error.status, error.code, error.message, close);
        return;
      }
      deps.log.error({ err: (error as Error).message }, "door request failed");
      if (!response.headersSent) sendError(response, 500, "internal_error", "the door failed");
    });
    return true;
  };
}

async function route(deps: DoorAppDeps, request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url ?? "/", deps.origin);
  const method = request.method ?? "GET";
  const path = url.pathname;
  if (path === "/signin" && method === "GET") return signIn(deps, url, response);
  if (path === DOOR_CALLBACK_PATH && method === "GET")
    return callback(deps, request, url, response);
  if (path === "/signout" && method === "POST") return signOut(deps, request, response);
  if (path === "/api/session" && method === "GET") return sessionInfo(deps, request, response);
  if (path === "/api/call" && method === "POST") return call(deps, request, response);
  if (path.startsWith("/api/") || path === "/signout") {
    return sendError(response, 405, "method_not_allowed", "no such method on this route");
  }
  if (method !== "GET" && method !== "HEAD") {
    return sendError(response, 405, "method_not_allowed", "the console is read with GET");
  }
  const asset = await deps.assets.find(path);
  if (asset === undefined) return sendError(response, 404, "not_found", "no such file");
  send(response, 200, asset.type, asset.body, { "content-security-policy": CONSOLE_CSP });
}

async function signIn(deps: DoorAppDeps, url: URL, response: ServerResponse) {
  const returnTo = returnTarget(url.searchParams.get("return"), deps.origin);
  const resources = await storeResources(deps);
  const verifier = randomToken();
  const state = deps.pending.add({ verifier, returnTo, resources });
  if (state === undefined) {
    return sendPage(
      response,
      503,
      "Too many sign-ins in progress",
      "The door is holding as many unfinished sign-ins as it may. Try again in a few minutes.",
      { "retry-after": "60" },
    );
  }
  const target = await deps.issuer.authorizationUrl(state, verifier, resources);
  // The state is also bound to this browser: a callback from another browser cannot use it.
  const bind = cookie(SIGNIN_COOKIE, state, DOOR_CALLBACK_PATH, PENDING_SIGNIN_TTL_MS / 1000);
  send(response, 302, "text/plain", "", { location: target.href, "set-cookie": bind });
}

/** The audiences of every listed store that answers (a store that is down is skipped). */
async function storeResources(deps: DoorAppDeps): Promise<string[]> {
  const found = new Set<string>();
  await Promise.all(
    deps.stores.names().map(async (name) => {
      const audience = await deps.stores.audience(name).catch(() => null);
      if (audience !== null) found.add(audience);
    }),
  );
  return [...found].sort();
}

async function callback(
  deps: DoorAppDeps,
  request: IncomingMessage,
  url: URL,
  response: ServerResponse,
) {
  const clear = cookie(SIGNIN_COOKIE, "", DOOR_CALLBACK_PATH, 0);
  const state = url.searchParams.get("state") ?? "";
  const bound = cookies(request).get(SIGNIN_COOKIE);
  const pending = bound === state ? deps.pending.take(state) : undefined;
  if (pending === undefined) {
    return sendPage(
      response,
      400,
      "This sign-in is not valid",
      "The sign-in state is unknown, already used, expired, or was started in another browser.",
      { "set-cookie": clear },
    );
  }
  const [first, ...others] = pending.resources;
  try {
    const redeemed = await deps.issuer.redeem(url, state, pending.verifier, first);
    const passes = new Map<string, Pass>();
    if (first !== undefined) passes.set(first, redeemed.pass);
    for (const resource of others) {
      if (redeemed.refreshToken === undefined) break;
      passes.set(resource, await deps.issuer.passFor(redeemed.refreshToken, resource));
    }
    const session = deps.sessions.create(redeemed.subject, passes, redeemed.refreshToken);
    deps.log.info({ subject: redeemed.subject }, "door sign-in");
    const set = cookie(SESSION_COOKIE, session.id, "/", deps.sessions.lifetimeSeconds);
    send(response, 302, "text/plain", "", {
      location: pending.returnTo,
      "set-cookie": [set, clear],
    });
  } catch (error) {
    deps.log.warn({ reason: (error as Error).message }, "door sign-in refused by the issuer");
    sendPage(
      response,
      502,
      "The identity provider did not complete the sign-in",
      "The sign-in could not be finished. Sign in again.",
      { "set-cookie": clear },
    );
  }
}

function session(deps: DoorAppDeps, request: IncomingMessage): Session | undefined {
  return deps.sessions.get(cookies(request).get(SESSION_COOKIE));
}

function signedOut(response: ServerResponse): void {
  sendError(response, 401, "signed_out", "you are not signed in (or your session has expired)");
}

/** Checks a state-changing call: a session, its CSRF token, and a same-origin browser. */
function checked(deps: DoorAppDeps, request: IncomingMessage, response: ServerResponse) {
  const current = session(deps, request);
  if (current === undefined) {
    signedOut(response);
    return undefined;
  }
  const origin = request.headers.origin;
  if (
    request.headers["x-csrf-token"] !== current.csrf ||
    (origin !== undefined && origin !== deps.origin)
  ) {
    sendError(response, 403, "csrf_refused", "the request did not come from this console");
    return undefined;
  }
  return current;
}

async function signOut(deps: DoorAppDeps, request: IncomingMessage, response: ServerResponse) {
  const current = checked(deps, request, response);
  if (current === undefined) return;
  deps.sessions.end(current.id);
  sendJson(
    response,
    200,
    { signed_out: true },
    { "set-cookie": cookie(SESSION_COOKIE, "", "/", 0) },
  );
}

function sessionInfo(deps: DoorAppDeps, request: IncomingMessage, response: ServerResponse) {
  const current = session(deps, request);
  if (current === undefined) return signedOut(response);
  sendJson(response, 200, {
    subject: current.subject,
    csrf: current.csrf,
    stores: deps.stores.names(),
    expires_at: new Date(current.expiresAt).toISOString(),
  });
}

interface CallBody {
  store: string;
  verb: string;
  args: Record<string, unknown>;
}

function callBody(raw: Buffer): CallBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch {
    throw new HttpRefusal(400, "invalid_request", "the body is not JSON");
  }
  const body = parsed as Partial<CallBody> | null;
  if (
    typeof body !== "object" ||
    body === null ||
    typeof body.store !== "string" ||
    typeof body.verb !== "string" ||
    typeof body.args !== "object" ||
    body.args === null ||
    Array.isArray(body.args)
  ) {
    throw new HttpRefusal(400, "invalid_request", "the body must be {store, verb, args}");
  }
  return body as CallBody;
}

async function call(deps: DoorAppDeps, request: IncomingMessage, response: ServerResponse) {
  const raw = await readBody(request);
  const current = checked(deps, request, response);
  if (current === undefined) return;
  if (!(request.headers["content-type"] ?? "").startsWith("application/json")) {
    return sendError(response, 415, "unsupported_media_type", "the body must be JSON");
  }
  const body = callBody(raw);
  if (!deps.stores.has(body.store))
    return sendError(response, 404, "unknown_store", "no such store");
  if (!CONSOLE_VERBS.has(body.verb)) {
    return sendError(response, 400, "unknown_verb", "the console does not offer that verb");
  }
  const args = AUTHORED.has(body.verb) ? { ...body.args, author: current.subject } : body.args;
  try {
    const pass = await passFor(deps, current, body.store);
    sendJson(response, 200, { result: await deps.stores.call(body.store, pass, body.verb, args) });
  } catch (error) {
    if (error instanceof SkeinError)
      return sendError(response, statusOf(error.code), error.code, error.message);
    const reason = (error as NodeJS.ErrnoException).code ?? "error";
    sendError(response, 502, "store_unreachable", `the store is not reachable (${reason})`);
  }
}

/** The user's pass for a store, renewed from the refresh token when it is about to expire. */
async function passFor(deps: DoorAppDeps, current: Session, store: string) {
  const audience = await deps.stores.audience(store);
  if (audience === null) return undefined;
  const held = current.passes.get(audience);
  if (held !== undefined && held.expiresAt - PASS_MARGIN_MS > Date.now()) return held.token;
  if (current.refreshToken !== undefined) {
    const renewed = await deps.issuer
      .passFor(current.refreshToken, audience)
      .catch(() => undefined);
    if (renewed !== undefined) {
      current.passes.set(audience, renewed);
      return renewed.token;
    }
  }
  throw new SkeinError(
    "pass_unavailable",
    held === undefined
      ? "this sign-in holds no pass for that store's database; sign in again"
      : "your pass has expired; sign in again",
  );
}

/** HTTP status of a store refusal: denials are 403, missing things 404, the rest 4xx/5xx. */
function statusOf(code: string): number {
  if (code === "permission_denied") return 403;
  if (code === "pass_unavailable" || code.startsWith("pass_")) return 401;
  if (code.endsWith("_not_found") || code === "unknown_store") return 404;
  // A stale preview or write (head_moved) and unresolved conflicts are conflicts with the state.
  if (code.endsWith("_exists") || code === "branch_protected") return 409;
  if (code === "head_moved" || code === "merge_conflict") return 409;
  if (code === "timeout" || code === "idp_unavailable") return 504;
  if (code === "internal_error" || code === "connection_closed") return 502;
  return 400;
}
