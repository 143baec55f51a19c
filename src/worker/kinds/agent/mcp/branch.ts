/**
 * An attempt's pinned branch: the server's `branch` expression, evaluated once per attempt
 * over `{input, namespace, workflow_id, run_id, activity_id}` (never the attempt number, so a
 * retry lands on the same branch), must give a store branch name. Every call whose tool
 * takes a branch to act on (`branch`, or `into` for a merge) is sent with it: a field left out
 * is filled in, a field naming another branch refuses the call before it leaves the worker.
 * Fields that only read a ref (`from`, `to`, `from_branch`, `version`) are the store's to
 * decide, by the agent's own grants. Before the first pinned call on a collection the branch
 * is created from `from` (the server's `branches_create`; `branch_exists` means a previous
 * attempt, or a person, made it), and the attempt's transcript records where it works.
 */

import jsonata from "jsonata";
import { SkeinError } from "../../../../common/errors.ts";
import type { TranscriptEntry } from "../../../../protocol/agent-transport/messages.ts";
import { type ActivityContext, ActivityError } from "../../../handler.ts";
import type { ToolAnswer } from "./answer.ts";
import type { McpConnection } from "./connection.ts";
import { toolError } from "./errors.ts";

/** The store's name rule for branches (src/store's NAME, as mcp-http's schemas state it). */
const BRANCH_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** The argument fields that name the branch a call acts on. */
export const PINNED_FIELDS = ["branch", "into"] as const;

/** Compiles a `branch` expression at document load; a syntax error refuses the document. */
export function compileBranch(expression: string): jsonata.Expression {
  try {
    return jsonata(expression);
  } catch (error) {
    const reason = (error as { message?: unknown })?.message ?? String(error);
    throw new SkeinError("branch_invalid", `branch: not a JSONata expression: ${String(reason)}`);
  }
}

export class BranchPin {
  readonly branch: string;
  readonly base: string;
  readonly #connection: McpConnection;
  readonly #record: (entry: TranscriptEntry) => void;
  /** Collections whose branch exists (made, or found made) in this attempt. */
  readonly #ready = new Set<string>();
  /** Collections whose workspace this attempt's transcript names. */
  readonly #recorded = new Set<string>();

  private constructor(
    branch: string,
    connection: McpConnection,
    record: (entry: TranscriptEntry) => void,
  ) {
    this.branch = branch;
    this.base = connection.spec.from;
    this.#connection = connection;
    this.#record = record;
  }

  /** Evaluates the expression for this attempt; a result that is no branch name fails it. */
  static async evaluate(
    expression: jsonata.Expression,
    input: unknown,
    ctx: ActivityContext,
    connection: McpConnection,
    record: (entry: TranscriptEntry) => void,
  ): Promise<BranchPin> {
    let value: unknown;
    try {
      value = await expression.evaluate({
        input,
        namespace: ctx.namespace,
        workflow_id: ctx.workflowId,
        run_id: ctx.runId,
        activity_id: ctx.activityId,
      });
    } catch (error) {
      const reason = (error as { message?: unknown })?.message ?? String(error);
      throw new ActivityError("branch_invalid", `${connection.key}.branch: ${String(reason)}`, {
        nonRetryable: true,
      });
    }
    if (typeof value !== "string" || !BRANCH_NAME.test(value)) {
      throw new ActivityError(
        "branch_invalid",
        `${connection.key}.branch gave ${JSON.stringify(value)?.slice(0, 160)}, not a branch name (1 to 128 letters, digits, '_', '.' or '-')`,
        { nonRetryable: true },
      );
    }
    return new BranchPin(value, connection, record);
  }

  /**
   * The arguments to send for a call of `tool` (pinned fields filled in), or the refusal the
   * model is answered with instead: nothing is sent.
   */
  pin(
    tool: string,
    args: Record<string, unknown>,
  ): { args: Record<string, unknown>; pinned: boolean } | ToolAnswer {
    const properties = this.#connection.tools.find((t) => t.name === tool)?.inputSchema.properties;
    const out = { ...args };
    let pinned = false;
    for (const field of PINNED_FIELDS) {
      if (properties === undefined || !Object.hasOwn(properties, field)) continue;
      pinned = true;
      const named = out[field];
      if (named === undefined) out[field] = this.branch;
      else if (named !== this.branch) {
        return toolError(
          "branch_refused",
          `this agent works on branch ${JSON.stringify(this.branch)} only; ${field} ${JSON.stringify(named)} was not sent`,
        );
      }
    }
    return { args: out, pinned };
  }

  /**
   * Makes the branch in `collection` before the attempt's first pinned call there. A failure
   * other than `branch_exists` is left to the call itself (the store says what is wrong:
   * a branch the agent may not make but was made for it, an unreachable store).
   */
  async ensure(collection: unknown, signal: AbortSignal): Promise<void> {
    if (typeof collection !== "string" || this.#ready.has(collection)) return;
    if (!this.#connection.tools.some((t) => t.name === "branches_create")) return;
    const made = await this.#connection.call(
      "branches_create",
      { collection, branch: this.branch, from_branch: this.base },
      signal,
    );
    const exists = !made.isError || made.code === "branch_exists";
    if (exists) this.#ready.add(collection);
    if (this.#recorded.has(collection)) return;
    this.#recorded.add(collection);
    this.#record({
      type: "workspace",
      server: this.#connection.key,
      url: this.#connection.spec.url,
      collection,
      branch: this.branch,
      base: this.base,
      created: !made.isError,
      door: this.#connection.spec.door,
    });
  }
}
