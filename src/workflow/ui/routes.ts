/**
 * `GET /ui` and `GET /ui/…`: the run console's page and its files, served from memory
 * (assets.ts). They need no bearer: the page holds no data, and every call it makes goes
 * through the HTTP API with the bearer the user signed in with, under the same grants as any
 * client. Every answer forbids framing, sniffing and referrers, and the page may run only
 * its own scripts and styles and talk only to this origin (no inline script, no CDN), so a
 * token in the tab's storage is not reachable from injected markup.
 */

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { workflowError } from "../errors.ts";
import { UI_PREFIX, type UiAssets } from "./assets.ts";

export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

const HEADERS = {
  "content-security-policy": UI_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  // Revalidated on every load (the ETag makes that a 304), so a new server's files are
  // never hidden behind a stale cache.
  "cache-control": "no-cache",
};

function serve(assets: UiAssets, request: FastifyRequest, reply: FastifyReply) {
  const pathname = request.url.split("?", 1)[0]!;
  const found = assets.find(pathname === UI_PREFIX ? `${UI_PREFIX}/` : pathname);
  if (found === undefined) {
    throw workflowError("route_not_found", "no console file at this path");
  }
  reply.headers({ ...HEADERS, etag: found.etag });
  if (request.headers["if-none-match"] === found.etag) return reply.code(304).send();
  return reply.type(found.type).send(found.body);
}

export function uiRoutes(app: FastifyInstance, assets: UiAssets): void {
  const config = {
    public: true,
    api: { summary: "The run console (HTML, CSS, JS); no bearer", responseType: "text/html" },
  };
  app.get(UI_PREFIX, { config }, (request, reply) => serve(assets, request, reply));
  app.get(`${UI_PREFIX}/*`, { config }, (request, reply) => serve(assets, request, reply));
}
