/**
 * `GET /metrics`: the node's Prometheus metrics in the text exposition format, and the
 * response hook that counts every HTTP request by method, route pattern and status code.
 * The route is labelled by its pattern (`/worker-deployments/:name`), and a request that no
 * route matched by `unmatched`, so a caller choosing URLs cannot create label values.
 *
 * Who may read: metrics name every namespace that has outbox rows, so a scrape needs a
 * bearer granted every namespace (`ns: "*"`, as the admin token and
 * `skein token issue --all-namespaces` have); a narrower bearer is 403 `forbidden`. A
 * Prometheus job sends it with `authorization.credentials_file` (docs/operations.md).
 */

import type { FastifyInstance } from "fastify";
import type { WorkflowMetrics } from "../metrics/registry.ts";
import { forbidden, principalOf } from "./auth.ts";

export function metricsRoutes(app: FastifyInstance, metrics: WorkflowMetrics): void {
  // A callback hook: an async one costs a promise and a microtask turn per request.
  app.addHook("onResponse", (request, reply, done) => {
    metrics.http.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? "unmatched",
        code: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
  app.get(
    "/metrics",
    {
      config: {
        api: {
          summary: "Prometheus metrics of this node (text format 0.0.4)",
          responseType: "text/plain",
          response: { type: "string" },
        },
      },
    },
    async (request, reply) => {
      if (principalOf(request).namespaces !== "*") {
        forbidden('reading metrics needs a bearer granted every namespace (ns: "*")');
      }
      const text = await metrics.registry.metrics();
      // A string payload is sent as it is (the JSON reply serializer takes objects only).
      reply.type(metrics.registry.contentType);
      return text;
    },
  );
}
