/**
 * `skein attempts WORKFLOW_ID`: the live attempts of a workflow (`POST /workflows/attempts`),
 * printed as the server's JSON answer; their identity is what `skein intervene` takes.
 */

import { stringify } from "lossless-json";
import { type Command, parseOptions } from "../../common/cli.ts";
import { request } from "./client.ts";
import { bearer, clientOptions, serverUrl } from "./options.ts";

export const attemptsCommand: Command = {
  name: "attempts",
  summary: "list the live attempts of a workflow",
  help: [
    "WORKFLOW_ID [--namespace N] [--server URL] [--token TOKEN]",
    "",
    "Prints {attempts: [{run_id, activity_id, attempt, capabilities}]} as JSON.",
  ].join("\n"),
  async run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...clientOptions, namespace: { type: "string" } },
      { min: 1, max: 1 },
    );
    const r = await request(
      { server: serverUrl(values.server), token: bearer(values.token) },
      "POST",
      "/workflows/attempts",
      {
        ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
        workflow_id: positionals[0],
      },
    );
    io.out(stringify(r) ?? "null");
    return 0;
  },
};
