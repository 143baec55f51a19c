/**
 * `skein deployment put|get|list|delete|desired|managed`: worker deployment calls against a
 * running server (`--server URL` or SKEIN_SERVER; `--token` or SKEIN_TOKEN, a bearer with
 * the deploy grant). `put NAME --file record.json` sends the record body as it is (the
 * server decodes it); the other verbs print the server's JSON answer on one line, so the
 * output can be piped to `jq`.
 */

import { readFile } from "node:fs/promises";
import { stringify } from "lossless-json";
import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { parseJson } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { cliFailure } from "../errors.ts";
import { request } from "./client.ts";
import { reportRefusal } from "./hints.ts";
import { CLIENT_HELP, clientOf, clientOptions, type OutputMode, outputMode } from "./options.ts";
import { emit } from "./output.ts";

const VERBS = ["put", "get", "list", "delete", "desired", "managed"] as const;

function path(name: string): string {
  return `/worker-deployments/${encodeURIComponent(name)}`;
}

async function readRecord(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw cliFailure(
      "record_file_unreadable",
      `--file: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return parseJson(text);
}

async function call(
  verb: string,
  rest: readonly string[],
  chosen: (mode: OutputMode) => void,
): Promise<unknown> {
  // Every verb parses the shared options through here, which also picks the output mode.
  const client = (values: { server?: string; token?: string; output?: string }) => {
    chosen(outputMode(values.output));
    return clientOf(values);
  };
  switch (verb) {
    case "put": {
      const { values, positionals } = parseOptions(
        rest,
        { ...clientOptions, file: { type: "string" } },
        { min: 1, max: 1 },
      );
      if (values.file === undefined) throw new UsageError("put needs --file record.json");
      const body = await readRecord(values.file);
      return request(client(values), "PUT", path(positionals[0]!), body);
    }
    case "get": {
      const { values, positionals } = parseOptions(rest, clientOptions, { min: 1, max: 1 });
      return request(client(values), "GET", path(positionals[0]!));
    }
    case "delete": {
      const { values, positionals } = parseOptions(rest, clientOptions, { min: 1, max: 1 });
      return request(client(values), "DELETE", path(positionals[0]!));
    }
    case "desired": {
      const { values, positionals } = parseOptions(rest, clientOptions, { min: 2, max: 2 });
      const desired = positionals[1]!;
      if (desired !== "running" && desired !== "stopped") {
        throw new UsageError(
          `desired state must be running or stopped, found ${JSON.stringify(desired)}`,
        );
      }
      return request(client(values), "POST", `${path(positionals[0]!)}/desired-state`, { desired });
    }
    case "list": {
      const { values } = parseOptions(rest, clientOptions, { max: 0 });
      return request(client(values), "GET", "/worker-deployments");
    }
    case "managed": {
      const { values } = parseOptions(rest, clientOptions, { max: 0 });
      return request(client(values), "GET", "/workers/managed");
    }
  }
  throw new UsageError(`expected one of ${VERBS.join(", ")}, found ${verb ?? "nothing"}`);
}

export const deploymentCommand: Command = {
  name: "deployment",
  summary: "manage worker deployments on a running server",
  verbs: VERBS,
  help: [
    "put NAME --file record.json   create or replace a deployment record",
    "       skein deployment get NAME                   one record",
    "       skein deployment list                       every record, and undecodable rows",
    "       skein deployment delete NAME                stop its worker and remove the record",
    "       skein deployment desired NAME running|stopped",
    "       skein deployment managed                    records joined with this node's processes",
    "",
    CLIENT_HELP,
    "  (the bearer needs the deploy grant; text output is the answer as indented JSON)",
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    try {
      let mode: OutputMode = "json";
      const answer = await call(verb ?? "", rest, (m) => {
        mode = m;
      });
      emit(io, mode, answer, () => stringify(answer, undefined, 2) ?? "null");
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      return reportRefusal(io, error);
    }
  },
};
