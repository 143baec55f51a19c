/**
 * The supervisor of the evaluator thread (expression-worker.ts), the server's one place where
 * JSONata expressions run. Evaluation is off the event loop, so HTTP, gRPC and timers keep
 * being served while an expression runs, and it is bounded from outside: the thread answers
 * requests in order, so the oldest unanswered request is the one running; when it has run
 * past the time limit plus a grace (counted from when the thread is ready: starting one takes
 * a while), or the thread dies (its heap limit), that request fails
 * with `expression_failed`, the thread is replaced and the requests queued behind it are sent
 * again. The thread starts on first use and does not keep the process alive while idle.
 *
 *   idle (unref'd) --evaluate--> busy (ref'd, watchdog on the oldest request)
 *   busy --answer--> busy | idle;  busy --deadline or death--> fail oldest, new thread, resend
 */

import { Worker } from "node:worker_threads";
import { SkeinError } from "../../common/errors.ts";
import { runFailure } from "../errors.ts";
import {
  EXPRESSION_HARD_GRACE_MS,
  EXPRESSION_HEAP_LIMIT_MB,
  EXPRESSION_TIME_LIMIT_MS,
  memoryLimitExceeded,
  timeLimitExceeded,
} from "./expression-limits.ts";
import type { EvaluateAnswer, EvaluateRequest } from "./expression-worker.ts";

interface Job {
  readonly request: EvaluateRequest;
  readonly resolve: (json: string) => void;
  readonly reject: (error: SkeinError) => void;
}

class Evaluator {
  #thread: Worker | undefined;
  /** The thread has loaded and said `ready`: only then does the watchdog run. */
  #ready = false;
  #nextId = 1;
  /** Sent and unanswered, oldest first: the first is the one the thread is running. */
  readonly #jobs: Job[] = [];
  #watchdog: NodeJS.Timeout | undefined;

  /** Evaluates `source` over `scope` on the thread; resolves with the result's JSON text. */
  evaluate(source: string, scope: EvaluateRequest["scope"]): Promise<string> {
    return new Promise((resolve, reject) => {
      const job: Job = { request: { id: this.#nextId++, source, scope }, resolve, reject };
      this.#jobs.push(job);
      this.#post(job);
      if (this.#jobs.length === 1) this.#watch();
    });
  }

  #post(job: Job): void {
    try {
      this.#started().postMessage(job.request);
    } catch (error) {
      this.#settle(job.request.id);
      job.reject(runFailure("expression_failed", `cannot evaluate: ${String(error)}`));
    }
  }

  #started(): Worker {
    if (this.#thread === undefined) {
      const thread = new Worker(new URL("./expression-worker.ts", import.meta.url), {
        execArgv: [],
        resourceLimits: { maxOldGenerationSizeMb: EXPRESSION_HEAP_LIMIT_MB },
      });
      thread.on("message", (answer: EvaluateAnswer) => this.#answered(answer));
      thread.on("error", (error) => this.#died(thread, error));
      thread.on("exit", () => this.#died(thread, undefined));
      this.#thread = thread;
      this.#ready = false;
    }
    this.#thread.ref();
    return this.#thread;
  }

  #answered(answer: EvaluateAnswer): void {
    if (answer.type === "ready") {
      this.#ready = true;
      this.#watch();
      return;
    }
    const job = this.#settle(answer.id);
    if (job === undefined) return;
    if (answer.type === "result") job.resolve(answer.json);
    else job.reject(new SkeinError(answer.code, answer.message));
  }

  /** Removes the job of `id` and moves the watchdog to the next oldest. */
  #settle(id: number): Job | undefined {
    const at = this.#jobs.findIndex((j) => j.request.id === id);
    if (at === -1) return undefined;
    const [job] = this.#jobs.splice(at, 1);
    if (at === 0) this.#watch();
    return job;
  }

  #watch(): void {
    clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
    if (this.#jobs.length === 0) {
      this.#thread?.unref();
      return;
    }
    if (!this.#ready) return;
    this.#watchdog = setTimeout(
      () => this.#replace(timeLimitExceeded()),
      EXPRESSION_TIME_LIMIT_MS + EXPRESSION_HARD_GRACE_MS,
    );
    this.#watchdog.unref();
  }

  #died(thread: Worker, error: Error | undefined): void {
    if (thread !== this.#thread) return;
    const outOfMemory =
      (error as { code?: string } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY";
    this.#replace(
      outOfMemory
        ? memoryLimitExceeded()
        : runFailure("expression_failed", `the evaluator stopped: ${error?.message ?? "exit"}`),
    );
  }

  /** Fails the running job, replaces the thread and resends the rest to the new one. */
  #replace(failure: SkeinError): void {
    const thread = this.#thread;
    this.#thread = undefined;
    void thread?.terminate();
    const [running, ...waiting] = this.#jobs.splice(0);
    running?.reject(failure);
    this.#jobs.push(...waiting);
    for (const job of waiting) this.#post(job);
    this.#watch();
  }
}

/** The process's one evaluator. */
export const evaluator = new Evaluator();
