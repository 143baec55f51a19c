/**
 * `skein intervene inject|pause|resume|budget|approve|deny WORKFLOW_ID RUN_ID ACTIVITY_ID
 * ATTEMPT …`: one intervention on one live agent attempt (`POST /workflows/intervene`). The
 * identity is copied from `skein attempts`. It prints the outcome object and exits 0 when
 * `Applied`, 1 for `CapabilityNotSupported` or `StaleTarget`. The spec gives the Cancel
 * intervention no CLI command: it is HTTP only.
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { request } from "./client.ts";
import { reportRefusal } from "./hints.ts";
import { clientOf, namespaced, namespacedOptions, outputMode } from "./options.ts";
import { emit } from "./output.ts";

const VERBS = ["inject", "pause", "resume", "budget", "approve", "deny"] as const;
type Verb = (typeof VERBS)[number];

/** Positionals after the identity, per verb. */
const EXTRA: Record<Verb, number> = {
  inject: 1,
  pause: 0,
  resume: 0,
  budget: 0,
  approve: 1,
  deny: 1,
};

const OPTIONS = {
  ...namespacedOptions,
  interrupt: { type: "boolean" },
  "max-tokens": { type: "string" },
  "max-turns": { type: "string" },
  note: { type: "string" },
} as const;

/** A non-negative integer option or argument; null when absent. */
export function count(name: string, text: string | undefined): number | null {
  if (text === undefined) return null;
  if (!/^\d{1,15}$/.test(text)) {
    throw new UsageError(`${name} must be a non-negative integer, found ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function kindOf(verb: Verb, extra: string[], values: Record<string, unknown>): object {
  const only = (allowed: string[]) => {
    for (const key of ["interrupt", "max-tokens", "max-turns", "note"]) {
      if (values[key] !== undefined && !allowed.includes(key)) {
        throw new UsageError(`--${key} does not go with ${verb}`);
      }
    }
  };
  switch (verb) {
    case "inject":
      only(["interrupt"]);
      return {
        kind: "InjectMessage",
        text: extra[0],
        priority: { priority: values.interrupt === true ? "Interrupt" : "Normal" },
      };
    case "pause":
    case "resume":
      only([]);
      return { kind: "PauseResume", paused: verb === "pause" };
    case "budget": {
      only(["max-tokens", "max-turns"]);
      const maxTokens = count("--max-tokens", values["max-tokens"] as string | undefined);
      const maxTurns = count("--max-turns", values["max-turns"] as string | undefined);
      if (maxTokens === null && maxTurns === null) {
        throw new UsageError("budget needs --max-tokens N, --max-turns N or both");
      }
      return { kind: "UpdateBudget", max_tokens: maxTokens, max_turns: maxTurns };
    }
    case "approve":
    case "deny":
      only(["note"]);
      return {
        kind: "RespondToApproval",
        call_id: extra[0],
        decision: { decision: verb === "approve" ? "Approve" : "Deny" },
        note: (values.note as string | undefined) ?? null,
      };
  }
}

export const interveneCommand: Command = {
  name: "intervene",
  summary: "steer one live agent attempt (inject, pause, resume, budget, approve, deny)",
  verbs: VERBS,
  help: [
    "VERB WORKFLOW_ID RUN_ID ACTIVITY_ID ATTEMPT … [-n N] [-s URL] [-t TOKEN] [-o text|json]",
    "",
    "  inject … TEXT [--interrupt]     queue a user turn (Interrupt: cut the model call short)",
    "  pause … | resume …              hold or continue the agent loop",
    "  budget … [--max-tokens N] [--max-turns N]   change the budget (an absent one is unchanged)",
    "  approve … CALL_ID [--note TEXT] | deny … CALL_ID [--note TEXT]   decide a pending tool call",
    "",
    "Prints the outcome ({outcome: {outcome}} as JSON); exit 0 when Applied, 1 for CapabilityNotSupported or",
    "StaleTarget. Cancelling one attempt is HTTP only (POST /workflows/intervene).",
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    if (verb === undefined || !(VERBS as readonly string[]).includes(verb)) {
      throw new UsageError(
        `expected a verb (${VERBS.join(", ")}), found ${JSON.stringify(verb ?? "")}`,
      );
    }
    const v = verb as Verb;
    const { values, positionals } = parseOptions(rest, OPTIONS, {
      min: 4 + EXTRA[v],
      max: 4 + EXTRA[v],
    });
    const mode = outputMode(values.output);
    const [workflowId, runId, activityId, attempt, ...extra] = positionals as string[];
    const body = {
      ...namespaced(values.namespace),
      workflow_id: workflowId,
      run_id: runId,
      activity_id: count("ACTIVITY_ID", activityId),
      attempt: count("ATTEMPT", attempt),
      kind: kindOf(v, extra, values),
    };
    let r: { outcome: { outcome: string } };
    try {
      r = (await request(clientOf(values), "POST", "/workflows/intervene", body)) as typeof r;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      return reportRefusal(io, error);
    }
    emit(io, mode, r, () => r.outcome.outcome);
    return r.outcome.outcome === "Applied" ? 0 : 1;
  },
};
