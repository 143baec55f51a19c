/**
 * What a tool is: its MCP description (name, JSON Schemas of its input and output, hints)
 * and its call, which reaches the server only through the HTTP routes it mirrors (routes.ts)
 * as the caller. Arguments are not judged here: the route's decoder judges them, so a tool
 * refuses exactly what its route refuses, with the same code.
 */

import type { ToolFacts } from "../../common/mcp-tool.ts";
import type { RouteAnswer, RouteCall } from "./routes.ts";

export interface ToolContext {
  readonly routes: RouteCall;
  /** The namespace the endpoint's URL names (`?namespace=`), for calls that name none. */
  readonly scope: string | undefined;
  /** Reports how far a long wait has come, when the client asked for progress; else nothing. */
  readonly progress: (done: number, total: number, message: string) => void;
}

export type ToolArgs = Readonly<Record<string, unknown>>;

export interface Tool extends ToolFacts {
  call(args: ToolArgs, context: ToolContext): Promise<RouteAnswer>;
}

/** The arguments with the endpoint's namespace when they name none. */
export function scoped(args: ToolArgs, context: ToolContext): ToolArgs {
  if (args.namespace !== undefined || context.scope === undefined) return args;
  return { ...args, namespace: context.scope };
}

/** An answer made here (not a route's own text): its value, written once. */
export function answer(value: Record<string, unknown>): RouteAnswer {
  return { value, text: JSON.stringify(value) };
}

/** How often a waiting tool reports progress (clients reset their timeout on each report). */
export const PROGRESS_EVERY_MS = 5_000;

/** Awaits `work`, reporting the time waited of `totalMs` every PROGRESS_EVERY_MS. */
export async function withProgress<T>(
  context: ToolContext,
  totalMs: number,
  message: string,
  work: Promise<T>,
): Promise<T> {
  const started = Date.now();
  const timer = setInterval(
    () => context.progress(Math.min(Date.now() - started, totalMs), totalMs, message),
    PROGRESS_EVERY_MS,
  );
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
