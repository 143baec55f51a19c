/**
 * The store's metrics listener: `GET /metrics` on the loopback address of `metrics_listen`,
 * in Prometheus text format. It is loopback-only (the decoder refuses any other address) and
 * unauthenticated, like the store socket's owner-only boundary it sits beside: whoever can
 * reach the host's loopback may read counts and latencies, never records, keys or names
 * beyond the served verb list. Connections are capped; other paths and methods are 404.
 */

import type { Logger } from "../../common/log.ts";
import type { ListenAddress } from "../config/addresses.ts";
import { type LoopbackHttp, startLoopbackHttp } from "../loopback-http.ts";
import type { StoreMetrics } from "./registry.ts";

/** Simultaneous connections to the metrics listener (a scraper needs one or two). */
export const METRICS_MAX_CONNECTIONS = 16n;

export function startMetricsListener(
  listen: ListenAddress,
  metrics: StoreMetrics,
  log: Logger,
): Promise<LoopbackHttp> {
  return startLoopbackHttp({
    listen,
    maxConnections: METRICS_MAX_CONNECTIONS,
    log,
    service: "metrics",
    headerTimeoutMs: 10_000,
    handler(request, response) {
      const path = request.url?.split("?")[0];
      if (request.method !== "GET" || path !== "/metrics") return false;
      metrics.registry.metrics().then(
        (text) => {
          response.writeHead(200, {
            "content-type": metrics.registry.contentType,
            "content-length": Buffer.byteLength(text),
          });
          response.end(text);
        },
        (error: unknown) => {
          log.error({ err: error }, "metrics collection failed");
          response.writeHead(500).end();
        },
      );
      return true;
    },
  });
}
