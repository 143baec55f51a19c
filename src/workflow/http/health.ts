/**
 * `GET /health`: the liveness probe. It needs no bearer, reads no storage and says only
 * that the HTTP role answers, so a load balancer or a test can poll it freely.
 */

import type { FastifyInstance } from "fastify";

export function healthRoutes(app: FastifyInstance): void {
  app.get(
    "/health",
    { config: { public: true, api: { summary: "Liveness: the HTTP API answers" } } },
    async () => ({ status: "ok" }),
  );
}
