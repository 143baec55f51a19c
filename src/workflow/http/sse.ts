/**
 * Server-sent event streams (`text/event-stream`) for the live views: the handler refuses
 * what it must as a normal JSON error first, then `serve` takes the response over and runs
 * the stream's loop. Every stream is bounded: at most `max` open per server (more are 503
 * `too_many_streams`), each ends after `maxMs` (the client reconnects with `after`), a
 * `: ping` comment goes out every `pingMs` so proxies and clients see a live connection, and
 * it ends promptly when the client goes away or the server stops (`close`, from the app's
 * preClose hook). A slow reader is waited for (`drain`), never buffered without bound.
 */

import { once } from "node:events";
import type { FastifyReply } from "fastify";
import type { Logger } from "../../common/log.ts";
import { workflowError } from "../errors.ts";
import { exactNumbers } from "./json.ts";

export interface StreamLimits {
  readonly max: number;
  readonly pingMs: number;
  readonly maxMs: number;
}

export const STREAM_LIMITS: StreamLimits = { max: 1000, pingMs: 15_000, maxMs: 10 * 60_000 };

/** What a stream's loop writes with; `signal` aborts when the stream must end. */
export interface EventStream {
  readonly signal: AbortSignal;
  /** Writes one event (`data` as JSON, numbers exact); waits while the client is behind. */
  send(event: string, data: unknown): Promise<void>;
}

export class EventStreams {
  readonly #open = new Set<AbortController>();
  readonly #limits: StreamLimits;
  readonly #log: Logger;
  #closed = false;

  constructor(logger: Logger, limits: StreamLimits = STREAM_LIMITS) {
    this.#log = logger;
    this.#limits = limits;
  }

  get open(): number {
    return this.#open.size;
  }

  /** Runs `loop` as the response; refuses (before anything is written) when full or closed. */
  async serve(reply: FastifyReply, loop: (stream: EventStream) => Promise<void>): Promise<void> {
    if (this.#closed) throw workflowError("shutting_down", "the server is stopping");
    if (this.#open.size >= this.#limits.max) {
      throw workflowError(
        "too_many_streams",
        `the server holds its maximum of ${this.#limits.max} live streams; retry later`,
      );
    }
    const controller = new AbortController();
    this.#open.add(controller);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    });
    const abort = () => controller.abort();
    raw.on("close", abort);
    const ping = setInterval(() => raw.write(": ping\n\n"), this.#limits.pingMs);
    const expiry = setTimeout(abort, this.#limits.maxMs);
    const stream: EventStream = {
      signal: controller.signal,
      send: async (event, data) => {
        if (controller.signal.aborted) return;
        const text = `event: ${event}\ndata: ${JSON.stringify(data, exactNumbers)}\n\n`;
        if (!raw.write(text)) await drained(raw, controller.signal);
      },
    };
    try {
      await loop(stream);
    } catch (error) {
      if (!controller.signal.aborted) this.#log.error({ err: error }, "event stream failed");
    } finally {
      clearInterval(ping);
      clearTimeout(expiry);
      raw.off("close", abort);
      this.#open.delete(controller);
      raw.end();
    }
  }

  /** Ends every open stream and refuses new ones (the server is stopping). */
  close(): void {
    this.#closed = true;
    for (const controller of this.#open) controller.abort();
  }
}

async function drained(raw: NodeJS.WritableStream, signal: AbortSignal): Promise<void> {
  try {
    await once(raw, "drain", { signal });
  } catch {
    // Aborted: the loop sees the signal and ends.
  }
}
