/**
 * Queries as the store serves them: admission, the worker pool, the time backstop and the
 * probe's verdict. Built once by `serve` from the query group of the service file (or
 * disabled when the group is omitted) and handed to the socket server.
 *
 * - Admission: at most query_max_running queries run at once; one more is refused with
 *   `query_busy` at once (no queueing: the caller decides whether to retry).
 * - Pool: one worker process per running query, so killing one never touches another;
 *   workers are reused across queries (each query gets a fresh sandbox inside) and a
 *   dead worker is dropped. At most query_max_running workers are kept.
 * - Time: the worker interrupts a query at query_time_ms; the store kills the worker at
 *   query_time_ms + QUERY_KILL_GRACE_MS (a native operation the interrupt cannot stop)
 *   and refuses with `query_time_limit`.
 * - A failed start-up probe is kept and is the answer to every query; other verbs are
 *   unaffected.
 */

import type { SkeinError } from "../../common/errors.ts";
import type { QuerySettings } from "../config/types.ts";
import type { Store } from "../engine/index.ts";
import { checkPage } from "../engine/paging.ts";
import { storeError } from "../errors.ts";
import { QUERY_KILL_GRACE_MS, WORKER_OUTPUT_FRAME_SLACK_BYTES } from "./limits.ts";
import { probeQueryWorker } from "./probe.ts";
import { type QueryLimits, type QueryPage, runQuery } from "./run-query.ts";
import { QueryWorkerProcess } from "./worker-process.ts";

export interface QueryRequest {
  readonly collection: string;
  readonly branch: string;
  readonly version?: number | string | undefined;
  readonly prefix?: string | undefined;
  readonly after?: string | undefined;
  readonly limit?: number | undefined;
  readonly code: string;
  readonly args?: unknown;
}

/** setTimeout's largest delay; a longer query_time_ms is capped to it for the kill timer. */
const MAX_TIMER_MS = 2_147_483_647;

export class QueryService {
  readonly #path: string;
  readonly #limits: QueryLimits;
  readonly #maxRunning: number;
  readonly #frameLimit: number;
  #failure: SkeinError | null = null;
  readonly #idle: QueryWorkerProcess[] = [];
  readonly #all = new Set<QueryWorkerProcess>();
  #running = 0;
  #closed = false;

  private constructor(settings: QuerySettings) {
    this.#path = settings.query_worker;
    this.#limits = {
      timeMs: Math.min(Number(settings.query_time_ms), MAX_TIMER_MS - QUERY_KILL_GRACE_MS),
      memoryBytes: Number(settings.query_memory_bytes),
      outputsPerRecord: Number(settings.query_outputs_per_record),
      scanRecords: Number(settings.query_scan_records),
    };
    this.#maxRunning = Number(settings.query_max_running);
    this.#frameLimit = Math.min(
      this.#limits.memoryBytes + WORKER_OUTPUT_FRAME_SLACK_BYTES,
      0xffff_ffff,
    );
  }

  /** Probes the worker; the service is returned either way, holding the probe's verdict. */
  static async start(settings: QuerySettings): Promise<QueryService> {
    const service = new QueryService(settings);
    const outcome = await probeQueryWorker(settings.query_worker, service.#frameLimit);
    if (outcome.ok) service.#keep(outcome.worker);
    else service.#failure = outcome.failure;
    return service;
  }

  /** The probe's named failure, or null when the worker passed it. */
  get failure(): SkeinError | null {
    return this.#failure;
  }

  /** Process ids of the live workers (tests look at their memory). */
  get workerPids(): number[] {
    return [...this.#all].filter((w) => !w.dead).map((w) => w.pid!);
  }

  /**
   * One page of a query. Everything up to the first await runs in the caller's turn: the
   * version is fixed as of the request's place in the store's queue.
   */
  async run(store: Store, request: QueryRequest): Promise<QueryPage> {
    if (this.#failure !== null) throw this.#failure;
    if (this.#closed) throw storeError("query_worker_failed", "the store is stopping");
    const maxPage = store.ctx.settings.maxPage;
    const limit = request.limit ?? Math.min(100, maxPage);
    checkPage(limit, maxPage, "max_page");
    if (this.#running >= this.#maxRunning) {
      throw storeError("query_busy", `query_max_running (${this.#maxRunning}) queries are running`);
    }
    const scan = store.scanRecords(request, { after: request.after, prefix: request.prefix });
    this.#running++;
    try {
      return await this.#runOnWorker(scan, {
        code: request.code,
        argsJson: JSON.stringify(request.args ?? null),
        limit,
      });
    } finally {
      scan.close();
      this.#running--;
    }
  }

  async #runOnWorker(
    scan: Parameters<typeof runQuery>[1],
    query: Parameters<typeof runQuery>[2],
  ): Promise<QueryPage> {
    const worker = await this.#acquire();
    let timedOut = false;
    // Armed until the worker has ended the query too: a worker stuck in a native
    // operation past the page's end is killed all the same.
    const timer = setTimeout(() => {
      timedOut = true;
      worker.kill("ran past query_time_ms and was killed");
    }, this.#limits.timeMs + QUERY_KILL_GRACE_MS);
    try {
      return await runQuery(worker, scan, query, this.#limits);
    } catch (error) {
      if (timedOut) {
        throw storeError(
          "query_time_limit",
          `the query ran past query_time_ms (${this.#limits.timeMs} ms)`,
        );
      }
      throw error;
    } finally {
      await this.#release(worker);
      clearTimeout(timer);
    }
  }

  async #acquire(): Promise<QueryWorkerProcess> {
    for (let worker = this.#idle.pop(); worker !== undefined; worker = this.#idle.pop()) {
      if (!worker.dead) return worker;
      this.#all.delete(worker);
    }
    const worker = await QueryWorkerProcess.start(this.#path, this.#frameLimit);
    this.#all.add(worker);
    return worker;
  }

  /** Ends the worker's query; a worker that answers is kept for the next one. */
  async #release(worker: QueryWorkerProcess): Promise<void> {
    if (!worker.dead) {
      try {
        const ended = await worker.send({ type: "end", id: worker.id() });
        if (ended.type !== "ended") worker.kill(`answered ${ended.type} where ended was due`);
      } catch {
        // Dead already: dropped below.
      }
    }
    if (worker.dead || this.#closed || this.#idle.length >= this.#maxRunning) {
      if (!worker.dead) worker.kill("is not needed");
      this.#all.delete(worker);
      return;
    }
    this.#idle.push(worker);
  }

  #keep(worker: QueryWorkerProcess): void {
    this.#all.add(worker);
    this.#idle.push(worker);
  }

  close(): void {
    this.#closed = true;
    for (const worker of this.#all) worker.kill("is stopped with the store");
    this.#all.clear();
    this.#idle.length = 0;
  }
}
