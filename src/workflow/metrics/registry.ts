/**
 * The workflow server's Prometheus metrics (`prom-client`), declared once per node. Counters
 * and histograms are moved by thin wrappers around the roles' interfaces (the engine store's
 * commit, the dispatcher and the matcher's events, Fastify's response hook: see the other
 * files here), never by the roles themselves; everything that is a level (runs held, claims,
 * backlog, connected workers) is read from its role when Prometheus scrapes, so it costs
 * nothing between scrapes. Labels are bounded by construction: route patterns, never URLs;
 * status codes; run statuses; worker kinds folded to the builtin four plus `other`; MCP
 * tools by their fixed names, every definition's tool folded to `run_<name>`;
 * namespaces only where the spec's ceiling is per namespace (they are durable, created
 * records, not request text). Metric names are documented in docs/operations.md.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { OneLabelHistogram } from "./histogram.ts";

/** Seconds buckets for work from sub-millisecond to minutes (activities, HTTP, commits). */
export const SECONDS_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
];
/** Sizes of one group commit, in runs or events. */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096];

/** The worker kinds a label may name; any other declared kind is counted as `other`. */
export const WORKER_KINDS = ["exec", "module", "http", "agent"] as const;

/** What scrape-time gauges read from the running node. */
export interface WorkflowProbes {
  /** Runs held in memory, by status (Running, Paused). */
  runsHeld(): ReadonlyMap<string, number>;
  /** Claimed and waiting outbox rows per namespace; empty when the outbox is off. */
  outboxLanes(): Iterable<{ namespace: string; claimed: number; waiting: number }>;
  /** This node's claim ceiling per namespace (0 when the outbox is off). */
  outboxCeiling(): number;
  /** Attempts waiting in the matcher's backlogs for a free worker slot. */
  matcherBacklog(): number;
  /** Attempts handed to (or re-attached by) workers and not yet settled. */
  matcherHolding(): number;
  /** The kind of each connected worker session. */
  workerKinds(): Iterable<string>;
}

export class WorkflowMetrics {
  readonly registry = new Registry();
  readonly runsEnded: Counter<"status">;
  readonly activities: OneLabelHistogram<"outcome">;
  readonly commitSeconds: Histogram;
  readonly commitRuns: Histogram;
  readonly commitEvents: Histogram;
  readonly commitFailures: Counter;
  readonly http: Histogram<"method" | "route" | "code">;
  readonly mcpTools: Histogram<"tool" | "outcome">;
  #probes: WorkflowProbes | undefined;
  #mcpSessions: (() => number) | undefined;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "skein_" });
    this.runsEnded = new Counter({
      name: "skein_runs_ended_total",
      help: "Runs whose end (Completed, Failed, Cancelled) became durable on this node.",
      labelNames: ["status"],
      registers,
    });
    this.activities = new OneLabelHistogram({
      name: "skein_activity_seconds",
      help: "Activity attempts from offer to a worker's result (schedule to close), by outcome.",
      labelName: "outcome",
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.commitSeconds = new Histogram({
      name: "skein_commit_seconds",
      help: "Duration of one group commit (one storage transaction).",
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.commitRuns = new Histogram({
      name: "skein_commit_batch_runs",
      help: "Runs written by one group commit.",
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.commitEvents = new Histogram({
      name: "skein_commit_batch_events",
      help: "History events written by one group commit.",
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.commitFailures = new Counter({
      name: "skein_commit_failures_total",
      help: "Group commits that failed (the engine stops after one).",
      registers,
    });
    this.http = new Histogram({
      name: "skein_http_request_seconds",
      help: "HTTP requests by method, route pattern and status code.",
      labelNames: ["method", "route", "code"],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.mcpTools = new Histogram({
      name: "skein_mcp_tool_seconds",
      help: "MCP tool calls by tool (run tools as run_<name>) and outcome (ok, refused, error).",
      labelNames: ["tool", "outcome"],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.#levels(registers);
  }

  /** Connects the scrape-time gauges to the running node (before it serves). */
  observe(probes: WorkflowProbes): void {
    this.#probes = probes;
  }

  /** Connects the MCP sessions gauge to the endpoint's session table (when MCP is on). */
  observeMcpSessions(open: () => number): void {
    this.#mcpSessions = open;
  }

  #levels(registers: Registry[]): void {
    const metrics = this;
    new Gauge({
      name: "skein_mcp_sessions",
      help: "MCP sessions open on this node (mcp.max_sessions bounds them).",
      registers,
      collect() {
        this.set(metrics.#mcpSessions?.() ?? 0);
      },
    });
    new Gauge({
      name: "skein_runs_held",
      help: "Runs held in memory by this node (not ended), by status.",
      labelNames: ["status"],
      registers,
      collect() {
        this.reset();
        for (const status of ["Running", "Paused"]) this.set({ status }, 0);
        for (const [status, n] of metrics.#probes?.runsHeld() ?? []) this.set({ status }, n);
      },
    });
    new Gauge({
      name: "skein_outbox_claimed",
      help: "Outbox rows claimed now, per namespace (compare skein_outbox_ceiling).",
      labelNames: ["namespace"],
      registers,
      collect() {
        this.reset();
        for (const lane of metrics.#probes?.outboxLanes() ?? []) {
          this.set({ namespace: lane.namespace }, lane.claimed);
        }
      },
    });
    new Gauge({
      name: "skein_outbox_waiting",
      help: "Outbox rows waiting for a claim (paused runs' rows included), per namespace.",
      labelNames: ["namespace"],
      registers,
      collect() {
        this.reset();
        for (const lane of metrics.#probes?.outboxLanes() ?? []) {
          this.set({ namespace: lane.namespace }, lane.waiting);
        }
      },
    });
    new Gauge({
      name: "skein_outbox_ceiling",
      help: "This node's claim ceiling per namespace (0: the outbox is disabled, no ceiling).",
      registers,
      collect() {
        this.set(metrics.#probes?.outboxCeiling() ?? 0);
      },
    });
    new Gauge({
      name: "skein_matcher_backlog",
      help: "Activity attempts waiting for a free worker slot.",
      registers,
      collect() {
        this.set(metrics.#probes?.matcherBacklog() ?? 0);
      },
    });
    new Gauge({
      name: "skein_matcher_holding",
      help: "Activity attempts held by workers (assigned or re-attached) and not yet settled.",
      registers,
      collect() {
        this.set(metrics.#probes?.matcherHolding() ?? 0);
      },
    });
    new Gauge({
      name: "skein_workers_connected",
      help: "Worker sessions connected to this node, by kind.",
      labelNames: ["kind"],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, number>(["other", ...WORKER_KINDS].map((k) => [k, 0]));
        for (const kind of metrics.#probes?.workerKinds() ?? []) {
          const label = (WORKER_KINDS as readonly string[]).includes(kind) ? kind : "other";
          counts.set(label, counts.get(label)! + 1);
        }
        for (const [kind, n] of counts) this.set({ kind }, n);
      },
    });
  }
}
