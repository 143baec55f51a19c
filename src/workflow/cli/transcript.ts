/**
 * `skein transcript WORKFLOW_ID RUN_ID ACTIVITY_ID ATTEMPT`: an agent attempt's transcript
 * (`POST /workflows/transcript`): user turns, model turns, tool calls and results, controls,
 * in order. The identity is what `skein attempts` lists. JSON: one entry per line; text: one
 * line per entry, its type first.
 */

import { type Command, parseOptions } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { request } from "./client.ts";
import { reportRefusal } from "./hints.ts";
import { count } from "./intervene.ts";
import {
  CLIENT_HELP,
  clientOf,
  NAMESPACE_HELP,
  namespaced,
  namespacedOptions,
  outputMode,
} from "./options.ts";
import { cell, emitLines } from "./output.ts";

export const transcriptCommand: Command = {
  name: "transcript",
  summary: "print an agent attempt's transcript",
  help: [
    "WORKFLOW_ID RUN_ID ACTIVITY_ID ATTEMPT [-n N] [-s URL] [-t TOKEN] [-o text|json]",
    "",
    CLIENT_HELP,
    NAMESPACE_HELP,
    "The identity comes from `skein attempts WORKFLOW_ID` (or describe's pending activities).",
  ].join("\n"),
  async run(args, io) {
    const { values, positionals } = parseOptions(args, namespacedOptions, { min: 4, max: 4 });
    const mode = outputMode(values.output);
    const [workflowId, runId, activityId, attempt] = positionals as [
      string,
      string,
      string,
      string,
    ];
    const body = {
      ...namespaced(values.namespace),
      workflow_id: workflowId,
      run_id: runId,
      activity_id: count("ACTIVITY_ID", activityId),
      attempt: count("ATTEMPT", attempt),
    };
    try {
      const r = (await request(clientOf(values), "POST", "/workflows/transcript", body)) as {
        entries: Record<string, unknown>[];
      };
      emitLines(io, mode, r.entries, () =>
        r.entries.length === 0
          ? "(no entries)"
          : r.entries.map(({ type, ...rest }) => `${cell(type)}  ${cell(rest)}`).join("\n"),
      );
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      return reportRefusal(io, error);
    }
  },
};
