/**
 * The stopping halves of a server node: a graceful stop of the HTTP listener (stop
 * accepting, let requests in flight finish within a grace period, then close whatever is
 * still open, so a stuck client can never hold a stopping node), and the stop of the engine
 * side in the order that loses nothing durable.
 */

import type { FastifyInstance } from "fastify";
import type { Logger } from "../common/log.ts";
import type { ClusterNode } from "./cluster/node.ts";
import type { WorkerEndpoint } from "./rpc/server.ts";

export async function closeWithin(
  app: FastifyInstance,
  graceMs: number,
  logger: Logger,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), graceMs);
  });
  const closed = app.close();
  // A keep-alive connection whose request finishes during the stop turns idle only then;
  // close such connections as they appear instead of waiting for their keep-alive timeout.
  const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
  if ((await Promise.race([closed, late])) === "late") {
    logger.warn(
      { grace_ms: graceMs },
      "requests still in flight after the grace period; closing them",
    );
    app.server.closeAllConnections();
    await closed;
  }
  clearTimeout(timer);
  clearInterval(sweep);
}

/** What stopping needs of the engine side: a single engine, or a cluster node's shards. */
export interface Stoppable {
  idle(): Promise<void>;
  close(): void;
}

/** Stops the engine side in the order that loses nothing durable (see `close`). */
export async function stopWorkflows(
  engine: Stoppable,
  endpoint: WorkerEndpoint,
  cluster?: ClusterNode,
): Promise<void> {
  // Workers go first, so no new result arrives; results not yet committed stay with their
  // workers, which send them again to the restarted server. A cluster node then hands its
  // shards over (each drained, released) and leaves.
  await endpoint.close();
  await cluster?.close();
  await engine.idle();
  engine.close();
}
