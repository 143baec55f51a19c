/**
 * The local supervisor: keeps, on this node, one worker process per deployment in the state
 * its record asks for. Callers hand it a target per name (a launch to keep running, or
 * "stopped") and it acts before the returned promise resolves: a running target has a live
 * child, a stopped one has none. Work for one name is serialised; names are independent.
 *
 * The supervised process, per deployment name:
 *
 *            apply(running)                 spawned
 *   stopped ───────────────► starting ─────────────────► running
 *      ▲                        ▲                          │   │ exited unasked
 *      │ exited                 │ backoff elapsed          │   ▼
 *      │                        └────────────────── backing_off
 *   stopping ◄──── apply(stopped) / new launch / forget / close (from running or backing_off)
 *
 * Stopping sends SIGTERM, then SIGKILL after `stopGraceMs`; a child still alive after a
 * further `stopGraceMs` is a stop failure (`stop_failed`). A new launch (revision) stops
 * the old child first, then starts the new one. Restarts after a crash wait
 * `backoffDelay(n)` for the n-th crash in a row; a child that stayed up `stableMs` resets n.
 */

import { type BackoffPolicy, backoffDelay } from "../../common/backoff.ts";
import { SkeinError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { workflowError } from "../errors.ts";
import type { ChildHandle, Launcher, LaunchSpec, ProcessExit } from "./launcher.ts";

export type ActualState = "starting" | "running" | "backing_off" | "stopping" | "stopped";

export interface SupervisorOptions {
  readonly launcher: Launcher;
  readonly logger: Logger;
  readonly stopGraceMs: number;
  readonly backoff: BackoffPolicy;
  readonly stableMs: number;
}

export const SUPERVISOR_DEFAULTS = {
  stopGraceMs: 5_000,
  backoff: { initialMs: 500, maxMs: 30_000 },
  stableMs: 10_000,
} as const;

export interface ProcessStatus {
  readonly state: ActualState;
  readonly pid: number | null;
  /** Milliseconds since the epoch when the current child started. */
  readonly startedAt: number | null;
  /** Restarts after unasked exits since supervision of this name began. */
  readonly restarts: number;
  readonly lastExit: ProcessExit | null;
  /** The launch revision of the current (or last) child. */
  readonly revision: number | null;
  /** When a backing-off instance starts again. */
  readonly nextStartAt: number | null;
  /** The wait chosen after the last unasked exit (null before the first). */
  readonly lastBackoffMs: number | null;
}

interface Instance {
  readonly name: string;
  target: LaunchSpec | null;
  state: ActualState;
  child: ChildHandle | undefined;
  startedAt: number | null;
  revision: number | null;
  restarts: number;
  crashesInRow: number;
  lastExit: ProcessExit | null;
  timer: NodeJS.Timeout | undefined;
  nextStartAt: number | null;
  lastBackoffMs: number | null;
  /** Serialises this name's operations. */
  queue: Promise<unknown>;
}

export class Supervisor {
  readonly #options: SupervisorOptions;
  readonly #instances = new Map<string, Instance>();
  #closed = false;

  constructor(options: SupervisorOptions) {
    this.#options = options;
  }

  /** Brings `name` to `target` (a launch to run, or null for stopped) before resolving. */
  apply(name: string, target: LaunchSpec | null): Promise<ProcessStatus> {
    const instance = this.#instance(name);
    return this.#serial(instance, async () => {
      instance.target = target;
      if (target === null) {
        await this.#stop(instance);
      } else if (instance.child !== undefined && instance.revision !== target.revision) {
        await this.#stop(instance);
        await this.#start(instance);
      } else if (instance.child === undefined) {
        if (instance.timer !== undefined && instance.revision === target.revision) {
          // Already backing off with this launch: the timer restarts it.
        } else {
          await this.#start(instance);
        }
      }
      return this.#status(instance);
    });
  }

  /** Stops the process of `name` (if any) and drops its state; rejects on a stop failure. */
  forget(name: string): Promise<void> {
    const instance = this.#instances.get(name);
    if (instance === undefined) return Promise.resolve();
    return this.#serial(instance, async () => {
      instance.target = null;
      try {
        await this.#stop(instance);
      } finally {
        this.#instances.delete(name);
      }
    });
  }

  /** The names this supervisor holds state for. */
  names(): string[] {
    return [...this.#instances.keys()];
  }

  status(name: string): ProcessStatus | undefined {
    const instance = this.#instances.get(name);
    return instance === undefined ? undefined : this.#status(instance);
  }

  /** Stops every process; used when the server exits, so it leaves no child behind. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#instances.values()].map((instance) =>
      this.#serial(instance, async () => {
        instance.target = null;
        await this.#stop(instance);
      }).catch((error) =>
        this.#options.logger.error(
          { err: error, deployment: instance.name },
          "stop failed at close",
        ),
      ),
    );
    await Promise.all(all);
  }

  #instance(name: string): Instance {
    let instance = this.#instances.get(name);
    if (instance === undefined) {
      instance = {
        name,
        target: null,
        state: "stopped",
        child: undefined,
        startedAt: null,
        revision: null,
        restarts: 0,
        crashesInRow: 0,
        lastExit: null,
        timer: undefined,
        nextStartAt: null,
        lastBackoffMs: null,
        queue: Promise.resolve(),
      };
      this.#instances.set(name, instance);
    }
    return instance;
  }

  #serial<T>(instance: Instance, work: () => Promise<T>): Promise<T> {
    const result = instance.queue.then(work);
    instance.queue = result.catch(() => {});
    return result;
  }

  #status(i: Instance): ProcessStatus {
    return {
      state: i.state,
      pid: i.child?.pid ?? null,
      startedAt: i.child === undefined ? null : i.startedAt,
      restarts: i.restarts,
      lastExit: i.lastExit,
      revision: i.revision,
      nextStartAt: i.state === "backing_off" ? i.nextStartAt : null,
      lastBackoffMs: i.lastBackoffMs,
    };
  }

  async #start(instance: Instance): Promise<void> {
    const target = instance.target;
    if (target === null || this.#closed) return;
    this.#clearTimer(instance);
    instance.state = "starting";
    instance.revision = target.revision;
    let child: ChildHandle;
    try {
      child = await this.#options.launcher.launch(target);
    } catch (error) {
      this.#options.logger.error({ err: error, deployment: instance.name }, "worker launch failed");
      this.#crashed(instance, { code: null, signal: null, at: Date.now() });
      return;
    }
    instance.child = child;
    instance.startedAt = Date.now();
    instance.state = "running";
    this.#options.logger.info(
      { deployment: instance.name, pid: child.pid, revision: target.revision },
      "worker started",
    );
    child.exited.then((exit) => this.#exited(instance, child, exit));
  }

  #exited(instance: Instance, child: ChildHandle, exit: ProcessExit): void {
    if (instance.child !== child) return;
    instance.child = undefined;
    instance.lastExit = exit;
    if (instance.state === "stopping") return; // #stop completes the transition
    const uptime = exit.at - (instance.startedAt ?? exit.at);
    if (uptime >= this.#options.stableMs) instance.crashesInRow = 0;
    this.#options.logger.warn(
      { deployment: instance.name, pid: child.pid, code: exit.code, signal: exit.signal },
      "worker exited unasked",
    );
    this.#crashed(instance, exit);
  }

  #crashed(instance: Instance, exit: ProcessExit): void {
    instance.lastExit = exit;
    if (instance.target === null || this.#closed || !this.#instances.has(instance.name)) {
      instance.state = "stopped";
      return;
    }
    instance.crashesInRow++;
    instance.restarts++;
    const delay = backoffDelay(this.#options.backoff, instance.crashesInRow);
    instance.state = "backing_off";
    instance.lastBackoffMs = delay;
    instance.nextStartAt = Date.now() + delay;
    instance.timer = setTimeout(() => {
      instance.timer = undefined;
      this.#serial(instance, async () => {
        if (instance.state === "backing_off") await this.#start(instance);
      }).catch((error) =>
        this.#options.logger.error({ err: error, deployment: instance.name }, "restart failed"),
      );
    }, delay);
    instance.timer.unref();
  }

  #clearTimer(instance: Instance): void {
    if (instance.timer !== undefined) clearTimeout(instance.timer);
    instance.timer = undefined;
    instance.nextStartAt = null;
  }

  async #stop(instance: Instance): Promise<void> {
    this.#clearTimer(instance);
    const child = instance.child;
    if (child === undefined) {
      instance.state = "stopped";
      return;
    }
    instance.state = "stopping";
    const grace = this.#options.stopGraceMs;
    try {
      child.signal("SIGTERM");
      if (!(await exitsWithin(child, grace))) {
        this.#options.logger.warn(
          { deployment: instance.name, pid: child.pid, grace_ms: grace },
          "worker ignored SIGTERM; sending SIGKILL",
        );
        child.signal("SIGKILL");
        if (!(await exitsWithin(child, grace))) {
          throw workflowError("stop_failed", `worker pid ${child.pid} did not exit after SIGKILL`);
        }
      }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw error instanceof SkeinError
        ? error
        : workflowError("stop_failed", `cannot stop worker pid ${child.pid}: ${reason}`, error);
    }
    instance.child = undefined;
    instance.state = "stopped";
  }
}

async function exitsWithin(child: ChildHandle, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = await Promise.race([child.exited.then(() => true as const), late]);
  clearTimeout(timer);
  return done;
}
