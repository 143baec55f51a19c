/**
 * The store service's Prometheus metrics (`prom-client`), served by `skein-store serve` on
 * its optional loopback listener (`metrics_listen`). Verbs (queries and embeddings are verbs
 * too: `query.run`, `embed.*`) are timed by the socket server's answer hook; commits by a
 * wrapper around the commit pipeline's writer; everything else (node cache hits and misses,
 * retention releases, clients, queued commits) is read from the store when Prometheus
 * scrapes. Labels are bounded: a verb label is one of the verbs this store serves (any
 * other name a client sends is `unknown`), an outcome is `ok` or a refusal code from the
 * store's catalogue. Names are documented in docs/operations.md.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Store } from "../engine/index.ts";
import type { CommitWriter } from "../lmdb/database.ts";

const SECONDS_BUCKETS = [
  0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** Levels read at scrape time. */
export interface StoreProbes {
  readonly store: Store;
  /** Connected socket clients. */
  clients(): number;
}

export class StoreMetrics {
  readonly registry = new Registry();
  readonly verbs: Histogram<"verb" | "outcome">;
  readonly commits: Histogram<"outcome">;
  #probes: StoreProbes | undefined;
  readonly #served: ReadonlySet<string>;

  /** `served`: the verbs this store serves (the only verb label values besides `unknown`). */
  constructor(served: Iterable<string>) {
    this.#served = new Set(served);
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "skein_store_" });
    this.verbs = new Histogram({
      name: "skein_store_verb_seconds",
      help: "Verbs from receipt to answer, by verb and outcome (ok or the refusal code).",
      labelNames: ["verb", "outcome"],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.commits = new Histogram({
      name: "skein_store_commit_seconds",
      help: "Pipelined commits from hand-off to LMDB until durable (or lost), by outcome.",
      labelNames: ["outcome"],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.#levels(registers);
  }

  /** The label of a verb name a client sent. */
  verbLabel(verb: string): string {
    return this.#served.has(verb) ? verb : "unknown";
  }

  observe(probes: StoreProbes): void {
    this.#probes = probes;
  }

  /** The pipeline's writer with each pipelined transaction timed (durable, skipped, failed). */
  meteredWriter(writer: CommitWriter): CommitWriter {
    const commits = this.commits;
    return {
      writeCommits: (batch) => writer.writeCommits(batch),
      pipelineMark: () => writer.pipelineMark(),
      async writeCommitsAfter(batch, after, mark) {
        const started = performance.now();
        const seconds = () => (performance.now() - started) / 1000;
        try {
          const done = await writer.writeCommitsAfter(batch, after, mark);
          commits.observe({ outcome: done ? "durable" : "skipped" }, seconds());
          return done;
        } catch (error) {
          commits.observe({ outcome: "failed" }, seconds());
          throw error;
        }
      },
    };
  }

  #levels(registers: Registry[]): void {
    const metrics = this;
    const store = () => metrics.#probes?.store;
    const readers = () => store()?.ctx.readers ?? [];
    new Counter({
      name: "skein_store_node_cache_hits_total",
      help: "Tree node lookups answered from the decoded-node cache (every shard).",
      registers,
      collect() {
        this.reset();
        this.inc(readers().reduce((n, r) => n + r.cache.hits, 0));
      },
    });
    new Counter({
      name: "skein_store_node_cache_misses_total",
      help: "Tree node lookups the cache could not answer (read and decoded from LMDB).",
      registers,
      collect() {
        this.reset();
        this.inc(readers().reduce((n, r) => n + r.cache.misses, 0));
      },
    });
    new Gauge({
      name: "skein_store_node_cache_bytes",
      help: "Bytes of decoded nodes held by the cache (every shard), and its capacity.",
      labelNames: ["of"],
      registers,
      collect() {
        this.set(
          { of: "used" },
          readers().reduce((n, r) => n + r.cache.bytes, 0),
        );
        this.set(
          { of: "capacity" },
          readers().reduce((n, r) => n + r.cache.capacity, 0),
        );
      },
    });
    new Counter({
      name: "skein_store_retention_runs_total",
      help: "Runs of the history release (the retention driver and history.release).",
      registers,
      collect() {
        this.reset();
        this.inc(store()?.ctx.releases.runs ?? 0);
      },
    });
    new Counter({
      name: "skein_store_retention_released_total",
      help: "History rows released by the retention policy.",
      registers,
      collect() {
        this.reset();
        this.inc(store()?.ctx.releases.released ?? 0);
      },
    });
    new Gauge({
      name: "skein_store_commits_in_flight",
      help: "Commits built and handed to LMDB, not yet durable.",
      registers,
      collect() {
        this.set(store()?.ctx.pipeline.unsettled ?? 0);
      },
    });
    new Gauge({
      name: "skein_store_clients",
      help: "Socket clients connected now (bounded by max_clients).",
      registers,
      collect() {
        this.set(metrics.#probes?.clients() ?? 0);
      },
    });
    new Gauge({
      name: "skein_store_nodes",
      help: "Tree nodes stored, and their bytes (store.stats).",
      labelNames: ["of"],
      registers,
      collect() {
        const nodes = store()?.ctx.db.nodeBytes();
        if (nodes === undefined) return;
        this.set({ of: "entries" }, nodes.entries);
        this.set({ of: "bytes" }, nodes.bytes);
      },
    });
  }
}
