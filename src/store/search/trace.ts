/**
 * Index-update trace lines (`SKEIN_SEARCH_TRACE=1`): one JSON line on stderr when an index
 * update starts and one when it ends, written synchronously, so whoever watches the
 * process knows an update is under way while the process is still inside it. The logger
 * cannot say that: it writes asynchronously, so its line about a synchronous update only
 * appears once the update is over. Crash tests use it to SIGKILL the store mid-update and
 * to confirm the kill landed there (a start line without its end line). Off by default;
 * on, it changes nothing but what is written.
 */

import { writeSync } from "node:fs";

export interface TraceEvent {
  readonly index: "vector" | "keyword";
  readonly update: "catch_up" | "rebuild" | "build" | "checkpoint";
  readonly collection: string;
  readonly branch: string;
  readonly records?: number;
}

export type Trace = (event: TraceEvent, phase: "start" | "end") => void;

/** The trace the environment asks for; undefined (no tracing) unless SKEIN_SEARCH_TRACE=1. */
export function searchTrace(env: Readonly<Record<string, string | undefined>>): Trace | undefined {
  if (env.SKEIN_SEARCH_TRACE !== "1") return undefined;
  let next = 1;
  const open = new WeakMap<TraceEvent, number>();
  return (event, phase) => {
    let id = open.get(event);
    if (id === undefined) {
      id = next++;
      open.set(event, id);
    }
    const line = JSON.stringify({ msg: "search index update", phase, id, ...event });
    writeSync(2, `${line}\n`);
  };
}

/** `work` between the trace's start and end lines (none when `trace` is undefined). */
export function traced<T>(trace: Trace | undefined, event: TraceEvent, work: () => T): T {
  trace?.(event, "start");
  const result = work();
  trace?.(event, "end");
  return result;
}
