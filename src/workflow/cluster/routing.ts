/**
 * Requests may land on any node of a cluster; the engine work of a run is done by the node
 * that serves its shard. This hook runs before the workflow handlers: a start, a control
 * (signal, cancel, pause, resume) or a describe that waits (`wait_ms`) whose run's shard is
 * served elsewhere is forwarded over HTTP to that node, with the caller's bearer (every node
 * of a cluster verifies the same signing key), and its answer is returned as it is. Reads
 * that do not wait (describe, list, history) answer from the shared database on any node.
 *
 * A start without a `workflow_id` gets one here whose shard this node serves, so it needs no
 * hop. A forwarded request carries `x-skein-forwarded` and is served where it arrives, never
 * forwarded again; if its shard moved meanwhile the handler answers `shard_unavailable`.
 * While a shard is between owners (draining, or expired and not yet taken) the hook looks
 * again after each lease round, for at most ROUTE_WAIT_MS, and then answers
 * `shard_unavailable` (503).
 *
 * A change of a worker deployment record on this node is announced to every node (NOTIFY),
 * which applies the records again: a record with `node` runs only on that node, one with
 * `node` null on every node.
 *
 * Interventions go where the attempt's agent connection is, which is not a function of the
 * shard: an intervention this node answers `StaleTarget` (it holds no connection for that
 * attempt) is asked of every other live node, and the first answer that is not `StaleTarget`
 * is the outcome. A node holding the connection decides exactly as a single node would, so
 * the outcomes and the `StaleTarget` rules are unchanged. The attempts list of a run is
 * likewise completed with every other live node's.
 */

import type { FastifyInstance, FastifyRequest } from "fastify";
import { uuidv7 } from "../../common/uuid.ts";
import { workflowError } from "../errors.ts";
import { exactNumbers } from "../http/json.ts";
import type { NamespaceRegistry } from "../namespaces/registry.ts";
import type { ClusterStorage } from "../persistence/store.ts";
import type { LeaseManager } from "./lease-manager.ts";
import { runShard } from "./shard-engines.ts";
import type { TaskRelay } from "./task-relay.ts";

export const FORWARDED_HEADER = "x-skein-forwarded";
/** How long a request waits for a shard between owners (a handover drains up to 2 s). */
export const ROUTE_WAIT_MS = 5_000;
/** The pause between two looks at a shard between owners (a lease round runs meanwhile). */
export const ROUTE_RETRY_MS = 100;
/** The longest a forwarded request may take (a describe may wait 60 s). */
export const FORWARD_TIMEOUT_MS = 75_000;
/** The longest one peer may take to answer an intervention or an attempts read. */
export const ASK_PEER_TIMEOUT_MS = 10_000;

const ROUTED = new Set([
  "/workflows/start",
  "/workflows/signal",
  "/workflows/cancel",
  "/workflows/pause",
  "/workflows/resume",
  "/workflows/describe",
]);

export interface RoutingRoles {
  readonly namespaces: NamespaceRegistry;
  readonly storage: ClusterStorage;
  readonly total: number;
  /** The lease manager, once the node has joined. */
  readonly manager: () => LeaseManager | undefined;
  /** Tasks for workers connected to other nodes (its node-to-node routes). */
  readonly relay?: TaskRelay;
  /** This node's claim ceiling per namespace now (its share of the quota). */
  readonly ceilingShare: () => number;
  /** Outbox rows this node has claimed now, per namespace (read with the share, at once). */
  readonly claimed: () => ReadonlyMap<string, number>;
  readonly quota: number;
}

type Body = Record<string, unknown>;

function isBody(value: unknown): value is Body {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function installRouting(app: FastifyInstance, roles: RoutingRoles): void {
  roles.relay?.routes(app);
  // What this node serves now: for operators, and for tests that follow the ceiling share.
  app.get("/cluster", async () => {
    const manager = roles.manager();
    const states = manager?.states() ?? new Map();
    return {
      node_id: manager?.self.nodeId ?? null,
      incarnation: manager === undefined ? null : String(manager.self.incarnation),
      shards: roles.total,
      owned: [...states]
        .filter(([, s]) => s === "owned")
        .map(([shard]) => shard)
        .sort((x, y) => x - y),
      quota: roles.quota,
      ceiling_share: roles.ceilingShare(),
      claimed: Object.fromEntries(roles.claimed()),
      peers: manager?.peers().map((p) => ({ node_id: p.nodeId, http_url: p.httpUrl })) ?? [],
    };
  });

  app.addHook("preHandler", async (request, reply) => {
    const path = request.routeOptions.url;
    if (request.method !== "POST" || path === undefined || !ROUTED.has(path)) return;
    if (request.headers[FORWARDED_HEADER] !== undefined) return;
    const manager = roles.manager();
    const body = request.body;
    if (manager === undefined || !isBody(body)) return;
    if (path === "/workflows/describe" && !(Number(body.wait_ms ?? 0) > 0)) return;
    let namespace: string;
    try {
      namespace = roles.namespaces.resolve(
        typeof body.namespace === "string" ? body.namespace : undefined,
      );
    } catch {
      return; // the handler gives the refusal
    }
    if (path === "/workflows/start" && body.workflow_id === undefined) {
      const id = localWorkflowId(manager, namespace, roles.total);
      if (id !== undefined) {
        body.workflow_id = id;
        return;
      }
      body.workflow_id = uuidv7();
    }
    if (typeof body.workflow_id !== "string") return;
    const workflowId = body.workflow_id;
    const shard =
      (await roles.storage.runShard(namespace, workflowId).catch(() => undefined)) ??
      runShard(namespace, workflowId, roles.total);
    const deadline = Date.now() + ROUTE_WAIT_MS;
    while (Date.now() < deadline) {
      if (manager.serves(shard)) return;
      const owner = manager.ownerOf(shard);
      if (owner !== undefined && owner.nodeId !== manager.self.nodeId) {
        const answer = await forward(owner.httpUrl, request, body, manager.self.nodeId);
        if (answer !== undefined) {
          reply.code(answer.status).header("content-type", "application/json; charset=utf-8");
          return reply.send(answer.text);
        }
      }
      await Promise.all([
        manager.settled(),
        new Promise((done) => setTimeout(done, ROUTE_RETRY_MS)),
      ]);
    }
    throw workflowError("shard_unavailable", `shard ${shard} has no serving owner now; retry`);
  });

  // A deployment record changed here: every node applies the records again (their `node`).
  app.addHook("onResponse", async (request, reply) => {
    if (request.method === "GET" || reply.statusCode >= 300) return;
    if (!request.url.startsWith("/worker-deployments")) return;
    await roles.storage.notify("deployments").catch(() => {});
  });

  app.addHook("onSend", async (request, reply, payload) => {
    const path = request.routeOptions.url;
    if (request.method !== "POST" || request.headers[FORWARDED_HEADER] !== undefined) {
      return payload;
    }
    if (typeof payload !== "string" || reply.statusCode !== 200) return payload;
    const manager = roles.manager();
    if (manager === undefined) return payload;
    if (path === "/workflows/attempts") return mergeAttempts(manager, request, payload);
    if (path !== "/workflows/intervene" || !isStale(payload)) return payload;
    for (const peer of manager.peers()) {
      const answer = await askPeer(peer.httpUrl, request, manager.self.nodeId);
      if (answer !== undefined && answer.status === 200 && !isStale(answer.text)) {
        return answer.text;
      }
    }
    return payload;
  });
}

/**
 * The live attempts of a run are wherever their workers' connections are: the list this node
 * answered is completed with every other live node's (an attempt listed twice is kept once).
 */
async function mergeAttempts(
  manager: LeaseManager,
  request: FastifyRequest,
  payload: string,
): Promise<string> {
  type Listed = { run_id: string; activity_id: number; attempt: number };
  const answers = await Promise.all(
    manager.peers().map((peer) => askPeer(peer.httpUrl, request, manager.self.nodeId)),
  );
  const merged = new Map<string, Listed>();
  for (const text of [payload, ...answers.map((a) => (a?.status === 200 ? a.text : undefined))]) {
    if (text === undefined) continue;
    try {
      for (const a of (JSON.parse(text) as { attempts: Listed[] }).attempts) {
        merged.set(`${a.run_id}/${a.activity_id}/${a.attempt}`, a);
      }
    } catch {
      // A peer's answer that is not the expected shape adds nothing.
    }
  }
  return JSON.stringify({ attempts: [...merged.values()] });
}

function isStale(text: string): boolean {
  try {
    const parsed = JSON.parse(text) as { outcome?: { outcome?: unknown } };
    return parsed.outcome?.outcome === "StaleTarget";
  } catch {
    return false;
  }
}

/** A new workflow id whose shard this node serves, or undefined when it serves none. */
function localWorkflowId(
  manager: LeaseManager,
  namespace: string,
  total: number,
): string | undefined {
  if (![...manager.states().values()].includes("owned")) return undefined;
  for (let i = 0; i < 16 * total; i++) {
    const id = uuidv7();
    if (manager.serves(runShard(namespace, id, total))) return id;
  }
  return undefined;
}

/** The same request asked of a peer (an intervention, an attempts read), bounded. */
function askPeer(baseUrl: string, request: FastifyRequest, from: string) {
  return forward(baseUrl, request, request.body, from, ASK_PEER_TIMEOUT_MS);
}

/** The peer's answer, or undefined when it cannot be reached (the caller tries again). */
async function forward(
  baseUrl: string,
  request: FastifyRequest,
  body: unknown,
  from: string,
  timeoutMs = FORWARD_TIMEOUT_MS,
): Promise<{ status: number; text: string } | undefined> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [FORWARDED_HEADER]: from,
  };
  const auth = request.headers.authorization;
  if (auth !== undefined) headers.authorization = auth;
  try {
    const response = await fetch(`${baseUrl}${request.url}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body, exactNumbers),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    // The owner gave the shard up meanwhile: look again.
    if (response.status === 503 && text.includes("shard_unavailable")) return undefined;
    return { status: response.status, text };
  } catch {
    return undefined;
  }
}
