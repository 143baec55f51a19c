/**
 * `GET /health`: the liveness probe. It needs no bearer, reads no storage and says only
 * that the HTTP role answers, so a load balancer or a test can poll it freely.
 * `GET /version`: the server's version and Node version, for `skein version`; it needs a
 * bearer like every other route (a version is a hint to an attacker).
 */

import type { FastifyInstance } from "fastify";
import { VERSION } from "../../common/version.ts";

export function healthRoutes(app: FastifyInstance): void {
  app.get(
    "/health",
    { config: { public: true, api: { summary: "Liveness: the HTTP API answers" } } },
    async () => ({ status: "ok" }),
  );
  app.get(
    "/version",
    { config: { api: { summary: "The server's version and its Node.js version" } } },
    async () => ({ version: VERSION, node: process.versions.node }),
  );
}
