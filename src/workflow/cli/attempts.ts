/**
 * `skein attempts WORKFLOW_ID`: the live attempts of a workflow (`POST /workflows/attempts`);
 * their identity is what `skein intervene` and `skein transcript` take. JSON: the server's
 * answer; text: a table.
 */

import { type Command, parseOptions } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { request } from "./client.ts";
import { reportRefusal } from "./hints.ts";
import {
  CLIENT_HELP,
  clientOf,
  NAMESPACE_HELP,
  namespaced,
  namespacedOptions,
  outputMode,
} from "./options.ts";
import { emit, table } from "./output.ts";

interface Attempt {
  run_id: string;
  activity_id: number;
  attempt: number;
  capabilities: string[];
}

export const attemptsCommand: Command = {
  name: "attempts",
  summary: "list the live attempts of a workflow",
  help: [
    "WORKFLOW_ID [-n N] [-s URL] [-t TOKEN] [-o text|json]",
    "",
    CLIENT_HELP,
    NAMESPACE_HELP,
    "JSON: {attempts: [{run_id, activity_id, attempt, capabilities}]}.",
  ].join("\n"),
  async run(args, io) {
    const { values, positionals } = parseOptions(args, namespacedOptions, { min: 1, max: 1 });
    const mode = outputMode(values.output);
    try {
      const r = (await request(clientOf(values), "POST", "/workflows/attempts", {
        ...namespaced(values.namespace),
        workflow_id: positionals[0],
      })) as { attempts: Attempt[] };
      emit(io, mode, r, () =>
        table(
          ["RUN ID", "ACTIVITY", "ATTEMPT", "CAPABILITIES"],
          r.attempts.map((a) => [
            a.run_id,
            String(a.activity_id),
            String(a.attempt),
            a.capabilities.join(","),
          ]),
        ),
      );
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      return reportRefusal(io, error);
    }
  },
};
