/**
 * `skein workflow register|start|describe|list|history|signal|pause|resume|cancel`: the
 * workflow endpoints from the command line, against a running server (`--server URL` or SKEIN_SERVER; `--token` or
 * SKEIN_TOKEN; `--namespace` or the server's default namespace). `register FILE` sends the
 * document's text (YAML or JSON by its extension) and prints its name and version; the
 * others print the server's answer as JSON (list and history: one JSON value per line).
 */

import { readFile } from "node:fs/promises";
import { stringify } from "lossless-json";
import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { parseJson } from "../../common/decode/index.ts";
import { formatOf } from "../../common/document-text.ts";
import { SkeinError } from "../../common/errors.ts";
import { DESCRIBE_WAIT_MAX_MS } from "../runs/ends.ts";
import { request } from "./client.ts";
import { bearer, clientOptions, serverUrl } from "./options.ts";

const common = { ...clientOptions, namespace: { type: "string" } } as const;

function namespaced(namespace: string | undefined): { namespace?: string } {
  return namespace === undefined ? {} : { namespace };
}

function client(values: { server?: string; token?: string }) {
  return { server: serverUrl(values.server), token: bearer(values.token) };
}

const VERBS = [
  "register",
  "start",
  "describe",
  "list",
  "history",
  "signal",
  "pause",
  "resume",
  "cancel",
];

export const workflowCommand: Command = {
  name: "workflow",
  summary: "register definitions, start runs and read them on a running server",
  help: [
    "register FILE [--namespace N] [--server URL] [--token TOKEN]",
    "       skein workflow start NAME [--version V] [--input JSON] [--workflow-id UUID] [--wait MS] …",
    "       skein workflow describe WORKFLOW_ID [--run-id UUID] [--wait MS] [--namespace N] …",
    "       skein workflow list [--status S] [--limit N] [--cursor C] [--namespace N] …",
    "       skein workflow history WORKFLOW_ID [--run-id UUID] [--namespace N] …",
    "       skein workflow signal WORKFLOW_ID NAME [--payload JSON] [--run-id UUID] …",
    "       skein workflow pause|resume|cancel WORKFLOW_ID [--run-id UUID] [--namespace N] …",
    "",
    "  --server URL    the server (default SKEIN_SERVER, else http://127.0.0.1:7380)",
    "  --token TOKEN   the bearer (default SKEIN_TOKEN)",
    "  --namespace N   the namespace (default: the server's namespaces.default)",
    "  register: FILE is YAML (.yaml, .yml) or JSON (.json); prints NAME VERSION",
    "  start: --input is the run's input as JSON (default {}); prints the answer as JSON;",
    "         --wait MS waits up to MS for the run to end and prints the run as describe",
    "         does (exit 1 when it Failed or was Cancelled)",
    "  list: one run per line as JSON; the next page's cursor goes to stderr",
    "  describe: --wait MS waits up to MS (at most 60000) for a live run to end",
    "  history: one event per line as JSON",
    "  signal, pause, resume, cancel: print {workflow_id, run_id, applied, status} as JSON",
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    if (verb === undefined || !VERBS.includes(verb)) {
      throw new UsageError(`expected one of ${VERBS.join(", ")}, found ${verb ?? "nothing"}`);
    }
    try {
      if (verb === "register") {
        const { values, positionals } = parseOptions(rest, common, { min: 1, max: 1 });
        const file = positionals[0]!;
        let text: string;
        try {
          text = await readFile(file, "utf8");
        } catch (error) {
          io.err(`skein: cannot read ${file}: ${(error as Error).message}`);
          return 1;
        }
        const r = (await request(client(values), "POST", "/workflows/definitions", {
          ...namespaced(values.namespace),
          definition: text,
          format: formatOf(file),
        })) as { name: string; version: string; created: boolean };
        io.out(`${r.name} ${r.version}${r.created ? "" : " (already registered)"}`);
        return 0;
      }
      if (verb === "start") {
        const { values, positionals } = parseOptions(
          rest,
          {
            ...common,
            version: { type: "string" },
            input: { type: "string" },
            "workflow-id": { type: "string" },
            wait: { type: "string" },
          },
          { min: 1, max: 1 },
        );
        const wait = values.wait === undefined ? undefined : waitMs("start", values.wait);
        let input: unknown = {};
        if (values.input !== undefined) {
          try {
            input = parseJson(values.input);
          } catch (error) {
            throw new UsageError(`--input is not JSON: ${(error as Error).message}`);
          }
        }
        const r = (await request(client(values), "POST", "/workflows/start", {
          ...namespaced(values.namespace),
          name: positionals[0],
          ...(values.version === undefined ? {} : { version: values.version }),
          input,
          ...(values["workflow-id"] === undefined ? {} : { workflow_id: values["workflow-id"] }),
        })) as { namespace: string; workflow_id: string; run_id: string };
        if (wait === undefined) {
          io.out(stringify(r) ?? "null");
          return 0;
        }
        // Start and await: print the run as describe does, once it ended or the wait ran out.
        const d = (await request(client(values), "POST", "/workflows/describe", {
          namespace: r.namespace,
          workflow_id: r.workflow_id,
          run_id: r.run_id,
          wait_ms: wait,
        })) as { run: { status: string } };
        io.out(stringify(d.run) ?? "null");
        return d.run.status === "Completed" ||
          d.run.status === "Running" ||
          d.run.status === "Paused"
          ? 0
          : 1;
      }
      if (verb === "signal" || verb === "pause" || verb === "resume" || verb === "cancel") {
        const signal = verb === "signal";
        const { values, positionals } = parseOptions(
          rest,
          { ...common, "run-id": { type: "string" }, payload: { type: "string" } },
          { min: signal ? 2 : 1, max: signal ? 2 : 1 },
        );
        if (!signal && values.payload !== undefined) {
          throw new UsageError("--payload goes with signal only");
        }
        let payload: unknown = null;
        if (values.payload !== undefined) {
          try {
            payload = parseJson(values.payload);
          } catch (error) {
            throw new UsageError(`--payload is not JSON: ${(error as Error).message}`);
          }
        }
        const r = await request(client(values), "POST", `/workflows/${verb}`, {
          ...namespaced(values.namespace),
          workflow_id: positionals[0],
          ...(values["run-id"] === undefined ? {} : { run_id: values["run-id"] }),
          ...(signal ? { signal: positionals[1], payload } : {}),
        });
        io.out(stringify(r) ?? "null");
        return 0;
      }
      if (verb === "describe" || verb === "history") {
        const { values, positionals } = parseOptions(
          rest,
          { ...common, "run-id": { type: "string" }, wait: { type: "string" } },
          { min: 1, max: 1 },
        );
        const wait = values.wait === undefined ? undefined : waitMs(verb, values.wait);
        const r = (await request(client(values), "POST", `/workflows/${verb}`, {
          ...namespaced(values.namespace),
          workflow_id: positionals[0],
          ...(values["run-id"] === undefined ? {} : { run_id: values["run-id"] }),
          ...(wait === undefined ? {} : { wait_ms: wait }),
        })) as { run?: unknown; events?: unknown[] };
        if (verb === "describe") io.out(stringify(r.run) ?? "null");
        else for (const event of r.events ?? []) io.out(stringify(event) ?? "null");
        return 0;
      }
      const { values } = parseOptions(
        rest,
        {
          ...common,
          status: { type: "string" },
          limit: { type: "string" },
          cursor: { type: "string" },
        },
        { max: 0 },
      );
      let limit: number | undefined;
      if (values.limit !== undefined) {
        limit = Number(values.limit);
        if (!Number.isInteger(limit)) throw new UsageError("--limit must be a whole number");
      }
      const r = (await request(client(values), "POST", "/workflows/list", {
        ...namespaced(values.namespace),
        ...(values.status === undefined ? {} : { status: values.status }),
        ...(limit === undefined ? {} : { limit }),
        ...(values.cursor === undefined ? {} : { cursor: values.cursor }),
      })) as { runs: unknown[]; next_cursor: string | null };
      for (const run of r.runs) io.out(stringify(run) ?? "null");
      if (r.next_cursor !== null) io.err(`next cursor: ${r.next_cursor}`);
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      io.err(`skein: ${error.message}`);
      return 1;
    }
  },
};

/** `--wait MS` of start and describe: whole milliseconds, at most the server's bound. */
function waitMs(verb: string, text: string): number {
  if (verb !== "describe" && verb !== "start") {
    throw new UsageError("--wait goes with start and describe only");
  }
  if (!/^\d+$/.test(text) || Number(text) > DESCRIBE_WAIT_MAX_MS) {
    throw new UsageError(`--wait must be whole milliseconds from 0 to ${DESCRIBE_WAIT_MAX_MS}`);
  }
  return Number(text);
}
