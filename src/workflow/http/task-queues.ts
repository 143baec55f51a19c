/**
 * Task queue reads: `POST /task-queues/describe` (`namespace`, `task_queue`) lists the
 * workers connected to one queue (name, kind, concurrency, busy slots, actions, deployment)
 * and its backlog per action: what a run's pending activities wait for. Like the workflow
 * endpoints, the namespace is in the body (omitted: `namespaces.default`) and the bearer
 * needs its grant (403 otherwise), so a caller learns nothing of another namespace's queues.
 * `queueServing` is the same join for describe's pending activities. The matcher answers
 * from memory: what this node's matcher holds now.
 */

import type { FastifyInstance } from "fastify";
import { object, optional, string } from "../../common/decode/index.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";
import { MAX_NAME_BYTES } from "../../protocol/worker-stream/decode.ts";
import { canAccessNamespace } from "../auth/tokens.ts";
import type { WorkerSession } from "../matching/matcher.ts";
import type { NamespaceRegistry } from "../namespaces/registry.ts";
import { forbidden, principalOf } from "./auth.ts";

/** What the HTTP layer reads from the matcher. */
export interface TaskQueueReader {
  workers(): readonly WorkerSession[];
  backlog(namespace: string, taskQueue: string): readonly { action: string; waiting: number }[];
  liveAttempts(runId: string): readonly { ref: { activity_id: number; attempt: number } }[];
}

const describeBody = object({
  namespace: optional(namespaceName()),
  // The bound and characters a worker's hello may use for its queue.
  task_queue: string({
    minBytes: 1,
    maxBytes: MAX_NAME_BYTES,
    noControl: true,
    expected: "task queue name",
  }),
});

/** The sessions serving one (namespace, task queue). */
export function queueWorkers(
  reader: TaskQueueReader,
  namespace: string,
  taskQueue: string,
): WorkerSession[] {
  return reader.workers().filter((w) => w.namespace === namespace && w.taskQueue === taskQueue);
}

function workerJson(w: WorkerSession) {
  return {
    name: w.name,
    kind: w.kind,
    concurrency: w.concurrency,
    busy: w.busy,
    actions: w.actions.map((a) => a.action),
    deployment: w.deployment === "" ? null : w.deployment,
    instance_id: w.instanceId,
    session_id: w.sessionId,
  };
}

export function taskQueueRoutes(
  app: FastifyInstance,
  namespaces: NamespaceRegistry,
  reader: TaskQueueReader,
): void {
  app.post(
    "/task-queues/describe",
    {
      config: {
        api: {
          summary: "Describe a task queue: connected workers, kinds, capacities, backlog",
          body: describeBody,
        },
      },
    },
    async (request) => {
      const body = describeBody.run(request.body, undefined);
      const namespace = namespaces.resolve(body.namespace);
      if (!canAccessNamespace(principalOf(request), namespace)) {
        forbidden(`the bearer's grants do not include namespace ${JSON.stringify(namespace)}`);
      }
      const workers = queueWorkers(reader, namespace, body.task_queue);
      const backlog = reader.backlog(namespace, body.task_queue);
      return {
        namespace,
        task_queue: body.task_queue,
        workers: workers.map(workerJson),
        capacity: workers.reduce((n, w) => n + w.concurrency, 0),
        busy: workers.reduce((n, w) => n + w.busy, 0),
        backlog: backlog.reduce((n, b) => n + b.waiting, 0),
        backlog_by_action: Object.fromEntries(backlog.map((b) => [b.action, b.waiting])),
      };
    },
  );
}
