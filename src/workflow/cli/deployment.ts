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
import { type ClientOptions, request } from "./client.ts";
import { bearer, clientOptions, serverUrl } from "./options.ts";

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

async function call(verb: string, rest: readonly string[]): Promise<unknown> {
  const client = (values: { server?: string; token?: string }): ClientOptions => ({
    server: serverUrl(values.server),
    token: bearer(values.token),
  });
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
  help: [
    "put NAME --file record.json   create or replace a deployment record",
    "       skein deployment get NAME                   one record",
    "       skein deployment list                       every record, and undecodable rows",
    "       skein deployment delete NAME                stop its worker and remove the record",
    "       skein deployment desired NAME running|stopped",
    "       skein deployment managed                    records joined with this node's processes",
    "",
    "  --server URL    the server (default SKEIN_SERVER, else http://127.0.0.1:7380)",
    "  --token TOKEN   a bearer with the deploy grant (default SKEIN_TOKEN)",
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    try {
      const answer = await call(verb ?? "", rest);
      io.out(stringify(answer) ?? "null");
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      io.err(`skein: ${error.message}`);
      return 1;
    }
  },
};
