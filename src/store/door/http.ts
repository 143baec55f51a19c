/**
 * Small HTTP helpers of the door: the bounded body reader (DOOR_BODY_MAX_BYTES, 413 past it,
 * answered so that the client reads it),
 * cookies, JSON and HTML answers with the console's security headers. Errors are
 * `{"error":{"code","message"}}`; messages never carry passes, cookies or document contents.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { readBoundedBody } from "../../common/http-body.ts";
import { DOOR_BODY_MAX_BYTES, DOOR_BROWSER_IO_MS, DOOR_DISCARD_MAX_BYTES } from "./bounds.ts";

export class HttpRefusal extends Error {
  readonly status: number;
  readonly code: string;
  /** The request did not arrive whole, so its connection cannot carry another: it closes. */
  readonly closes: boolean;
  constructor(status: number, code: string, message: string, closes = false) {
    super(message);
    this.status = status;
    this.code = code;
    this.closes = closes;
  }
}

/** Headers on every answer: nothing is framed, sniffed or leaked through the referrer. */
const COMMON = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/** The console's page: its own scripts and styles only (no inline script, no CDN). */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export function send(
  response: ServerResponse,
  status: number,
  type: string,
  body: Buffer | string,
  headers: Record<string, string | string[]> = {},
): void {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  response.writeHead(status, {
    ...COMMON,
    "content-type": type,
    "content-length": bytes.length,
    ...headers,
  });
  response.end(bytes);
}

/** JSON with bigints (MessagePack integers beyond 2^53) as decimal strings. */
export function sendJson(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  const text = JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v));
  send(response, status, "application/json", text, headers);
}

export function sendError(
  response: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(response, status, { error: { code, message } }, headers);
}

const escapes: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c]!);
}

/** A plain page for the sign-in flow's refusals: what happened and a way back in. */
export function sendPage(
  response: ServerResponse,
  status: number,
  title: string,
  text: string,
  headers: Record<string, string | string[]> = {},
): void {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><link rel="stylesheet" href="/console.css"></head><body class="plain"><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p><p><a href="/signin">Sign in again</a> · <a href="/">Console</a></p></main></body></html>`;
  send(response, status, "text/html; charset=utf-8", html, {
    "content-security-policy": CONSOLE_CSP,
    ...headers,
  });
}

export function cookies(request: IncomingMessage): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) jar.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return jar;
}

/** `Set-Cookie` for the door's cookies: HttpOnly, Secure, SameSite=Lax, always. */
export function cookie(name: string, value: string, path: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=${path}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`;
}

/** The 413 of a body over DOOR_BODY_MAX_BYTES; `unread` while the body is still arriving. */
export class BodyTooLarge extends HttpRefusal {
  readonly unread: boolean;
  constructor(unread: boolean) {
    super(
      413,
      "body_too_large",
      `the request body is larger than ${DOOR_BODY_MAX_BYTES} bytes`,
      true,
    );
    this.unread = unread;
  }
}

/**
 * Reads a request body of at most DOOR_BODY_MAX_BYTES within DOOR_BROWSER_IO_MS. A body
 * declared larger is refused before any of it is read (`answerTooLarge` drains it), so a
 * client waiting for an answer before it sends gets one; an undeclared one that grows past
 * the bound is read to its end and dropped first.
 */
export async function readBody(request: IncomingMessage): Promise<Buffer> {
  if (Number(request.headers["content-length"] ?? 0) > DOOR_BODY_MAX_BYTES) {
    throw new BodyTooLarge(true);
  }
  const read = await readBoundedBody(request, {
    maxBytes: DOOR_BODY_MAX_BYTES,
    discardBytes: DOOR_DISCARD_MAX_BYTES,
    timeoutMs: DOOR_BROWSER_IO_MS,
  });
  switch (read.kind) {
    case "body":
      return read.bytes;
    case "too_large":
      throw new BodyTooLarge(false);
    case "timeout":
      if (read.tooLarge) throw new BodyTooLarge(false);
      throw new HttpRefusal(408, "body_timeout", "the request body did not arrive in time", true);
    case "cut_off":
      throw new HttpRefusal(400, "body_cut_off", "the request body was cut off", true);
  }
}

/**
 * Answers a BodyTooLarge with 413 at once and closes the connection only once the request
 * has stopped arriving: the rest of a body still on its way is read and dropped (a close
 * with unread bytes is a reset, which takes the answer with it), up to
 * DOOR_DISCARD_MAX_BYTES and for at most DOOR_BROWSER_IO_MS, so a client that sends only
 * its head holds the connection no longer than the spec's read bound.
 */
export function answerTooLarge(
  request: IncomingMessage,
  response: ServerResponse,
  refusal: BodyTooLarge,
): void {
  const body = Buffer.from(
    JSON.stringify({ error: { code: refusal.code, message: refusal.message } }),
  );
  response.writeHead(413, {
    ...COMMON,
    "content-type": "application/json",
    "content-length": body.length,
    connection: "close",
  });
  if (!refusal.unread || request.complete) {
    response.end(body);
    return;
  }
  // Written now, ended once the body has stopped: ending closes the connection.
  response.write(body);
  let dropped = 0;
  let done = false;
  const finish = (cut: boolean) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    request.off("data", drop);
    response.end();
    if (cut) request.socket.destroy();
  };
  const drop = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DOOR_DISCARD_MAX_BYTES) finish(true);
  };
  const timer = setTimeout(() => finish(true), DOOR_BROWSER_IO_MS);
  request.on("data", drop);
  request.once("end", () => finish(false));
  request.once("close", () => clearTimeout(timer));
}
