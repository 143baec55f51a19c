/**
 * The run API layer between the HTTP handlers and the engine: starting a run (idempotent on
 * a client-supplied `workflow_id`), and the reads (describe, list, history), which show
 * only durable state: they answer from the store, or, for a describe that waited and saw its
 * run end, from the run as the engine reported its durable end. One run exists per (namespace,
 * workflow_id); a start whose workflow id has a run, durable or still being started,
 * returns that run instead of starting another.
 */

import { uuidv7 } from "../../common/uuid.ts";
import { inputRefusal } from "../definitions/input-schema.ts";
import type { WorkflowDefinition } from "../definitions/types.ts";
import type { Engine } from "../engine/engine.ts";
import type { HistoryEvent, RunStatus } from "../engine/history.ts";
import type { RunState } from "../engine/state.ts";
import { workflowError } from "../errors.ts";
import { endOf } from "../persistence/sql/run-rows.ts";
import type {
  HistoryRange,
  RunPage,
  RunQuery,
  RunRecord,
  RunStore,
} from "../persistence/workflows.ts";
import { RunEnds } from "./ends.ts";
import { type PendingActivity, pendingActivities } from "./pending.ts";

export interface StartRequest {
  readonly namespace: string;
  readonly definition: WorkflowDefinition;
  readonly inputJson: string;
  /** Client-chosen; a new UUID when absent. */
  readonly workflowId: string | undefined;
  /** A run deadline in ms from the start; overrides the definition's `deadline_ms`. */
  readonly deadlineMs?: number | undefined;
}

export interface Started {
  readonly workflowId: string;
  readonly runId: string;
  /** False when the workflow id already had a run (an idempotent repeat). */
  readonly created: boolean;
}

/** A control of a run: what the engine is asked to do. */
export type RunControl =
  | { readonly kind: "cancel" | "pause" | "resume" }
  | { readonly kind: "signal"; readonly signal: string; readonly payloadJson: string };

/** What a control did, and the run's status after it. */
export interface ControlDone {
  readonly workflowId: string;
  readonly runId: string;
  /** False when the run has ended or is already in the asked-for state. */
  readonly applied: boolean;
  readonly status: RunStatus;
}

/** What the run service asks of the engine: a single engine, or a cluster node's shards. */
export type RunEngine = Pick<Engine, "start" | "state" | "cancel" | "pause" | "resume" | "signal">;

/** How many started runs RunService remembers for describe's wait (a bound, not a need). */
export const LIVE_STARTS = 4096;

/** What a run's record takes from its start; the rest is in its history. */
type RunOrigin = Pick<RunRecord, "namespace" | "workflowId" | "runId" | "definitionName">;

/** A run started here: what its record takes from the start (the rest is in its history). */
interface StartedHere {
  readonly runId: string;
  readonly definitionName: string;
}

/**
 * The record of a run as its row holds it once its end is durable (sql/run-commit.ts
 * writes these fields from the same events), from the state the engine reported with the
 * end (`RunEnds`): a describe that saw the end answers with it, without reading the row
 * back. That answer is the run at the moment its end landed, a moment within the describe.
 * The end event is always the run's last (engine/state.ts refuses any after it), so the
 * row's `updated_at` is its time. Undefined when the wait did not see the end.
 */
function ended(run: RunOrigin, state: RunState | undefined): RunRecord | undefined {
  const started = state?.started;
  const end = state?.ended === undefined ? undefined : endOf([state.ended]);
  if (state === undefined || started === undefined || end === undefined) return undefined;
  return {
    namespace: run.namespace,
    workflowId: run.workflowId,
    runId: run.runId,
    definitionVersion: started.definition_version,
    definitionName: run.definitionName,
    status: state.status,
    startedAt: started.at,
    updatedAt: end.at,
    endedAt: end.at,
    outputJson: end.output,
    failure: end.failure === null ? null : { code: end.failure[0], message: end.failure[1] },
  };
}

export class RunService {
  readonly #engine: RunEngine;
  readonly #runs: RunStore;
  /** Starts not yet durable, by namespace and workflow id. */
  readonly #starting = new Map<string, Promise<Started>>();
  readonly #ends: RunEnds;
  /**
   * The latest runs started here, by namespace and workflow id (at most LIVE_STARTS, the
   * oldest leaving first): a describe that waits for one of them, while the engine still
   * holds it, waits before reading the store rather than after as well, and answers with
   * the run as it ended, which it sees end (see `ended`). An entry may outlive its run: it
   * is used only while the engine holds that run.
   */
  readonly #started = new Map<string, StartedHere>();

  /** `ends` must be told of every run end (the engine's `onRunEnded`). */
  constructor(engine: RunEngine, runs: RunStore, ends: RunEnds = new RunEnds(0)) {
    this.#engine = engine;
    this.#runs = runs;
    this.#ends = ends;
  }

  /** Refused with `invalid_input` when the input does not satisfy the definition's schema. */
  async start(request: StartRequest): Promise<Started> {
    // Every start passes here (HTTP, MCP, a forwarded cluster request); a child step checks
    // with the same rule (engine/run-tree.ts).
    const refused = inputRefusal(request.definition, request.inputJson);
    if (refused !== undefined) throw workflowError("invalid_input", refused);
    const workflowId = request.workflowId ?? uuidv7();
    const key = `${request.namespace}\0${workflowId}`;
    const inFlight = this.#starting.get(key);
    if (inFlight !== undefined) return { ...(await inFlight), created: false };
    if (request.workflowId !== undefined) {
      const existing = await this.#runs.byWorkflowId(request.namespace, workflowId);
      if (existing !== undefined) {
        return { workflowId, runId: existing.runId, created: false };
      }
      // Another start of this id may have begun while the store was read.
      const raced = this.#starting.get(key);
      if (raced !== undefined) return { ...(await raced), created: false };
    }
    const runId = uuidv7();
    const started = this.#engine
      .start({
        runId,
        workflowId,
        namespace: request.namespace,
        definition: request.definition,
        inputJson: request.inputJson,
        ...(request.deadlineMs === undefined ? {} : { deadlineMs: request.deadlineMs }),
      })
      .then(() => ({ workflowId, runId, created: true }));
    this.#starting.set(key, started);
    try {
      const done = await started;
      if (this.#started.size >= LIVE_STARTS)
        this.#started.delete(this.#started.keys().next().value!);
      this.#started.set(key, { runId, definitionName: request.definition.name });
      return done;
    } finally {
      this.#starting.delete(key);
    }
  }

  /**
   * The run of a workflow id; `run_not_found` when there is none. With `waitMs`, a live run
   * is read again once it has ended or the wait has run out (a long poll).
   */
  async describe(
    namespace: string,
    workflowId: string,
    runId?: string,
    waitMs = 0,
  ): Promise<RunRecord> {
    return (await this.describeWith(namespace, workflowId, runId, waitMs, async () => {}))[0];
  }

  /**
   * `describe`, and `alongside` of the run's id read with the run's last read: after a wait
   * both go to the store in the same turn (one crossing to its thread, not two in a row).
   */
  async describeWith<T>(
    namespace: string,
    workflowId: string,
    runId: string | undefined,
    waitMs: number,
    alongside: (runId: string) => Promise<T>,
  ): Promise<[RunRecord, T]> {
    // A run started here and still held by the engine is live: the read before the wait
    // would only say so (a client's describe right after its start is the usual case).
    const here = waitMs === 0 ? undefined : this.#started.get(`${namespace}\0${workflowId}`);
    if (
      here !== undefined &&
      (runId === undefined || runId === here.runId) &&
      this.#engine.state(here.runId) !== undefined
    ) {
      return this.#afterEnd({ namespace, workflowId, ...here }, runId, waitMs, alongside);
    }
    const run = await this.#record(namespace, workflowId, runId);
    if (waitMs === 0 || (run.status !== "Running" && run.status !== "Paused")) {
      return [run, await alongside(run.runId)];
    }
    // Checked and registered in one turn: the engine reports the end after this turn, or it
    // has already dropped the run (ended meanwhile, or taken out), and the read is fresh.
    if (this.#engine.state(run.runId) !== undefined) {
      return this.#afterEnd(run, runId, waitMs, alongside);
    }
    return this.#readWith(namespace, workflowId, runId, run.runId, alongside);
  }

  /**
   * Waits for the end of `known` (live in the engine, checked in this turn), and answers
   * with the run as the engine reported its durable end; when the wait did not see the end
   * (it ran out, the table was full), the run is read.
   */
  async #afterEnd<T>(
    known: RunOrigin,
    runId: string | undefined,
    waitMs: number,
    alongside: (runId: string) => Promise<T>,
  ): Promise<[RunRecord, T]> {
    const run = ended(known, await this.#ends.wait(known.runId, waitMs));
    if (run !== undefined) return [run, await alongside(run.runId)];
    return this.#readWith(known.namespace, known.workflowId, runId, known.runId, alongside);
  }

  /**
   * The run read after a wait, with `alongside` of the run expected in the same turn (a
   * workflow id has one run, so it is the same run; `alongside` is asked again if not).
   */
  async #readWith<T>(
    namespace: string,
    workflowId: string,
    runId: string | undefined,
    expected: string,
    alongside: (runId: string) => Promise<T>,
  ): Promise<[RunRecord, T]> {
    const [last, read] = await Promise.all([
      this.#record(namespace, workflowId, runId),
      alongside(expected),
    ]);
    return last.runId === expected ? [last, read] : [last, await alongside(last.runId)];
  }

  async #record(namespace: string, workflowId: string, runId?: string): Promise<RunRecord> {
    const run = await this.#runs.byWorkflowId(namespace, workflowId);
    if (run === undefined || (runId !== undefined && run.runId !== runId)) {
      throw workflowError(
        "run_not_found",
        `no run of workflow ${workflowId}${runId === undefined ? "" : ` with run id ${runId}`} ` +
          `in namespace ${JSON.stringify(namespace)}`,
      );
    }
    return run;
  }

  /**
   * Applies a control to the run of a workflow id. The engine records it (durably, before
   * this resolves) when it applies; a run that has ended is answered with its stored status.
   */
  async control(
    namespace: string,
    workflowId: string,
    runId: string | undefined,
    control: RunControl,
  ): Promise<ControlDone> {
    const run = await this.describe(namespace, workflowId, runId);
    const engine = this.#engine;
    const result =
      control.kind === "signal"
        ? await engine.signal(run.runId, control.signal, control.payloadJson)
        : await engine[control.kind](run.runId);
    const status = result.status ?? (await this.describe(namespace, workflowId)).status;
    return { workflowId, runId: run.runId, applied: result.applied, status };
  }

  /** A page of a namespace's runs, filtered (status, definition name, start time). */
  list(query: RunQuery): Promise<RunPage> {
    return this.#runs.list(query);
  }

  /** Whether this node's engine holds the run (it is live here, so its commits signal). */
  held(runId: string): boolean {
    return this.#engine.state(runId) !== undefined;
  }

  /**
   * The unfinished activities of a live run, from its durable history (runs/pending.ts);
   * `events`: that history, when the caller has read it already.
   */
  async pending(run: RunRecord, events?: readonly HistoryEvent[]): Promise<PendingActivity[]> {
    if (run.status !== "Running" && run.status !== "Paused") return [];
    return pendingActivities(events ?? (await this.events(run)));
  }

  /** The run's whole durable history. */
  async events(run: RunRecord): Promise<HistoryEvent[]> {
    return (await this.#runs.history(run.runId)) ?? [];
  }

  /** The run's events, all of them or (with a range) only those at the range's indexes. */
  async history(
    namespace: string,
    workflowId: string,
    runId?: string,
    range?: HistoryRange,
  ): Promise<{ run: RunRecord; events: HistoryEvent[] }> {
    const run = await this.describe(namespace, workflowId, runId);
    return { run, events: (await this.#runs.history(run.runId, range)) ?? [] };
  }
}
