/**
 * The plain login page that authorization code flows (the door, browsers) pass through:
 * oidc-provider sends the browser to `/interaction/<uid>`; a `login` prompt gets a small HTML
 * form, whose POST checks the name and password (scrypt) and finishes the interaction; a
 * `consent` prompt is granted at once (every client of a development IdP is first-party), so
 * a sign-in is one form. Failed sign-ins are throttled per name (LOGIN_FAILURES_PER_MINUTE)
 * and per network source (LOGIN_FAILURES_PER_SOURCE_PER_MINUTE), both checked before any
 * password is; an unknown name costs no hash (password-check.ts). Passwords are never
 * logged; a failure names the user and the source only.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import {
  LOGIN_FAILURES_PER_MINUTE,
  LOGIN_FAILURES_PER_SOURCE_PER_MINUTE,
  LOGIN_THROTTLE_NAMES,
  LOGIN_THROTTLE_SOURCES,
  MAX_LOGIN_BODY_BYTES,
} from "../bounds.ts";
import { idpError } from "../errors.ts";
import { readBody } from "../http/io.ts";
import type { IdpState } from "../state/state.ts";
import { PasswordCheck } from "./password-check.ts";
import { FailureWindows, sourceOf } from "./throttle.ts";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(uid: string, clientId: string, name: string, problem: string | undefined) {
  const notice = problem === undefined ? "" : `<p role="alert">${escapeHtml(problem)}</p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in: skein-idp</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>Sign in</h1><p>to continue to <b>${escapeHtml(clientId)}</b></p>${notice}
<form method="post" action="/interaction/${encodeURIComponent(uid)}/login">
<label>Name <input name="name" autocomplete="username" required value="${escapeHtml(name)}"></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form></main></body></html>`;
}

/**
 * The origin the finished sign-in redirects to (oidc-provider checked the redirect_uri against
 * the client's registration before the interaction began). Browsers apply `form-action` to
 * every redirect after the form's POST, so without it the final hop to the client is blocked.
 */
function redirectOrigin(details: { params: Record<string, unknown> }): string {
  try {
    const origin = new URL(String(details.params.redirect_uri ?? "")).origin;
    return origin === "null" ? "" : ` ${origin}`;
  } catch {
    return "";
  }
}

function sendHtml(response: ServerResponse, status: number, html: string, formTo = ""): void {
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(html),
    "cache-control": "no-store",
    "content-security-policy": `default-src 'none'; form-action 'self'${formTo}`,
    "x-frame-options": "DENY",
  });
  response.end(html);
}

export class LoginRoutes {
  readonly #provider: Provider;
  readonly #names = new FailureWindows(LOGIN_FAILURES_PER_MINUTE, LOGIN_THROTTLE_NAMES);
  readonly #sources = new FailureWindows(
    LOGIN_FAILURES_PER_SOURCE_PER_MINUTE,
    LOGIN_THROTTLE_SOURCES,
  );
  readonly #passwords: PasswordCheck;
  readonly #log: (event: Record<string, unknown>, message: string) => void;

  constructor(
    provider: Provider,
    state: IdpState,
    log: (event: Record<string, unknown>, message: string) => void,
  ) {
    this.#provider = provider;
    this.#passwords = new PasswordCheck((name) => state.passwordHash(name));
    this.#log = log;
  }

  /** GET /interaction/<uid>: the form for a login prompt; consent is granted at once. */
  async show(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const details = await this.#provider.interactionDetails(request, response);
    if (details.prompt.name === "login") {
      const clientId = String(details.params.client_id ?? "");
      const page = loginPage(details.uid, clientId, "", undefined);
      sendHtml(response, 200, page, redirectOrigin(details));
      return;
    }
    await this.#consent(request, response, details);
  }

  /** POST /interaction/<uid>/login: the form's answer. */
  async login(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const details = await this.#provider.interactionDetails(request, response);
    const type = request.headers["content-type"] ?? "";
    if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
      throw idpError("unsupported_media_type", "the login form must be form-encoded");
    }
    const form = new URLSearchParams((await readBody(request, MAX_LOGIN_BODY_BYTES)).toString());
    const name = form.get("name") ?? "";
    const password = form.get("password") ?? "";
    const clientId = String(details.params.client_id ?? "");
    const source = sourceOf(request.socket.remoteAddress);
    if (this.#sources.blocked(source) || this.#names.blocked(name)) {
      this.#log({ user: name, source }, "sign-in throttled");
      const page = loginPage(
        details.uid,
        clientId,
        name,
        "Too many failed sign-ins; wait a minute.",
      );
      sendHtml(response, 429, page, redirectOrigin(details));
      return;
    }
    const verdict = await this.#passwords.check(name, password);
    if (verdict !== "ok") {
      // Unknown names count too: a name that never reaches 429 would be known not to exist.
      this.#names.failed(name);
      this.#sources.failed(source);
      this.#log({ user: name, source }, "sign-in failed");
      const page = loginPage(details.uid, clientId, name, "Wrong name or password.");
      sendHtml(response, 401, page, redirectOrigin(details));
      return;
    }
    // The source's window stays: one good password must not clear a spray of guesses.
    this.#names.succeeded(name);
    this.#log({ user: name }, "signed in");
    await this.#provider.interactionFinished(
      request,
      response,
      { login: { accountId: name } },
      { mergeWithLastSubmission: false },
    );
  }

  async #consent(
    request: IncomingMessage,
    response: ServerResponse,
    details: Awaited<ReturnType<Provider["interactionDetails"]>>,
  ): Promise<void> {
    const { session, params, prompt } = details;
    const accountId = session?.accountId;
    if (prompt.name !== "consent" || accountId === undefined) {
      throw idpError("invalid_request", "the sign-in cannot continue; start again");
    }
    const grant =
      details.grantId !== undefined
        ? await this.#provider.Grant.find(details.grantId)
        : new this.#provider.Grant({ accountId, clientId: String(params.client_id) });
    if (grant === undefined) throw idpError("invalid_request", "the sign-in expired; start again");
    const missing = prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    const grantId = await grant.save();
    await this.#provider.interactionFinished(
      request,
      response,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
  }
}
