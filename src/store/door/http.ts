/**
 * Small HTTP helpers of the door: the bounded body reader (DOOR_BODY_MAX_BYTES, 413 past it),
 * cookies, JSON and HTML answers with the console's security headers. Errors are
 * `{"error":{"code","message"}}`; messages never carry passes, cookies or document contents.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { DOOR_BODY_MAX_BYTES } from "./bounds.ts";

export class HttpRefusal extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
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

/** Reads a request body of at most DOOR_BODY_MAX_BYTES; past it, a 413 refusal. */
export function readBody(request: IncomingMessage): Promise<Buffer> {
  const declared = Number(request.headers["content-length"] ?? "0");
  if (declared > DOOR_BODY_MAX_BYTES) {
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > DOOR_BODY_MAX_BYTES) {
        request.removeAllListeners("data");
        request.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    request.once("end", () => resolve(Buffer.concat(chunks)));
    request.once("error", reject);
  });
}

function tooLarge(): HttpRefusal {
  return new HttpRefusal(
    413,
    "body_too_large",
    `the request body is larger than ${DOOR_BODY_MAX_BYTES} bytes`,
  );
}
