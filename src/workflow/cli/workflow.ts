/**
 * `skein workflow register|start|definitions|describe|list|history|signal|pause|resume|cancel`:
 * the workflow endpoints from the command line, against a running server (options.ts: `-s`,
 * `-t`, `-n`, `-o`). `register FILE` sends the document's text (YAML or JSON by its
 * extension; `-` reads YAML or JSON from stdin); `start` takes its input from `--input JSON`
 * or `--input-file PATH` (`-`: stdin). With `-o json` (the default when piped) each command
 * prints the server's answer (list, history and definitions: one JSON value per line);
 * with `-o text` (the default on a terminal) tables and `key: value` lines
 * (workflow-views.ts).
 */

import { readFile } from "node:fs/promises";
import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { parseJson } from "../../common/decode/index.ts";
import { formatOf } from "../../common/document-text.ts";
import { SkeinError } from "../../common/errors.ts";
import { DESCRIBE_WAIT_MAX_MS } from "../runs/ends.ts";
import { request } from "./client.ts";
import { reportRefusal } from "./hints.ts";
import {
  CLIENT_HELP,
  clientOf,
  namespacedOptions as common,
  NAMESPACE_HELP,
  namespaced,
  namespaceOption,
  outputMode,
} from "./options.ts";
import { emit, emitLines, fields } from "./output.ts";
import {
  type DefinitionJson,
  definitionsTable,
  describeText,
  historyTable,
  type PendingJson,
  type RunJson,
  runsTable,
  type WorkspaceJson,
} from "./workflow-views.ts";

const VERBS = [
  "register",
  "start",
  "definitions",
  "describe",
  "list",
  "history",
  "signal",
  "pause",
  "resume",
  "cancel",
];

/** A file's text, `-` meaning stdin. */
async function readInput(path: string): Promise<string> {
  if (path !== "-") return readFile(path, "utf8");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function jsonOption(name: string, text: string): unknown {
  try {
    return parseJson(text);
  } catch (error) {
    throw new UsageError(`${name} is not JSON: ${(error as Error).message}`);
  }
}

interface DescribeAnswer {
  run: RunJson;
  pending_activities: PendingJson[];
  pending_total: number;
  /** Absent from a server older than the field. */
  workspaces?: WorkspaceJson[];
}

/** Describe's JSON: the run's fields, then its pending activities and workspaces. */
const describeJson = (d: DescribeAnswer) => ({
  ...d.run,
  pending_activities: d.pending_activities,
  pending_total: d.pending_total,
  workspaces: d.workspaces ?? [],
});

export const workflowCommand: Command = {
  name: "workflow",
  summary: "register definitions, start runs and read them on a running server",
  verbs: VERBS,
  help: [
    "register FILE|- [-n N] [-s URL] [-t TOKEN] [-o text|json]",
    "       skein workflow definitions …",
    "       skein workflow start NAME [--version V] [-i JSON | -f FILE|-] [--workflow-id UUID] [-w MS] …",
    "       skein workflow describe WORKFLOW_ID [--run-id UUID] [-w MS] …",
    "       skein workflow list [--status S] [--order oldest|newest] [--limit N] [--cursor C] …",
    "       skein workflow history WORKFLOW_ID [--run-id UUID] [--limit N] …",
    "       skein workflow signal WORKFLOW_ID NAME [--payload JSON] [--run-id UUID] …",
    "       skein workflow pause|resume|cancel WORKFLOW_ID [--run-id UUID] …",
    "",
    CLIENT_HELP,
    NAMESPACE_HELP,
    "  register: FILE is YAML (.yaml, .yml) or JSON (.json); - reads YAML or JSON from stdin",
    "  definitions: the registered definitions, each name with its latest version",
    "  start: -i/--input JSON or -f/--input-file FILE (- for stdin) is the run's input",
    "         (default {}); -w/--wait MS waits up to MS for the run to end and prints it as",
    "         describe does (exit 1 when it Failed or was Cancelled)",
    "  describe: the run, and for a live run its pending activities (queue, attempt, state,",
    "            last failure, next retry, workers serving); -w/--wait MS (at most 60000)",
    "            waits for a live run to end",
    "  list: runs by start time, oldest first unless --order newest; the next page's cursor",
    "        goes to stderr (it keeps the order: --cursor alone continues it)",
    "  history: every event of the run, read --limit N (default 10000) events per request",
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    if (verb === undefined || !VERBS.includes(verb)) {
      throw new UsageError(`expected one of ${VERBS.join(", ")}, found ${verb ?? "nothing"}`);
    }
    try {
      switch (verb) {
        case "register":
          return await register(rest, io);
        case "start":
          return await start(rest, io);
        case "definitions":
          return await definitions(rest, io);
        case "describe":
          return await describe(rest, io);
        case "history":
          return await history(rest, io);
        case "list":
          return await list(rest, io);
        default:
          return await control(verb, rest, io);
      }
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      return reportRefusal(io, error);
    }
  },
};

type Io = Parameters<Command["run"]>[1];

async function register(rest: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(rest, common, { min: 1, max: 1 });
  const mode = outputMode(values.output);
  const file = positionals[0]!;
  let text: string;
  try {
    text = await readInput(file);
  } catch (error) {
    io.err(`skein: cannot read ${file}: ${(error as Error).message}`);
    return 1;
  }
  const r = (await request(clientOf(values), "POST", "/workflows/definitions", {
    ...namespaced(values.namespace),
    definition: text,
    format: file === "-" ? "yaml" : formatOf(file),
  })) as { name: string; version: string; created: boolean };
  emit(io, mode, r, () => `${r.name} ${r.version}${r.created ? "" : " (already registered)"}`);
  return 0;
}

async function start(rest: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    rest,
    {
      ...common,
      version: { type: "string" },
      input: { type: "string", short: "i" },
      "input-file": { type: "string", short: "f" },
      "workflow-id": { type: "string" },
      wait: { type: "string", short: "w" },
    },
    { min: 1, max: 1 },
  );
  const mode = outputMode(values.output);
  const wait = values.wait === undefined ? undefined : waitMs(values.wait);
  if (values.input !== undefined && values["input-file"] !== undefined) {
    throw new UsageError("--input and --input-file exclude each other");
  }
  let input: unknown = {};
  if (values.input !== undefined) input = jsonOption("--input", values.input);
  if (values["input-file"] !== undefined) {
    const file = values["input-file"];
    let text: string;
    try {
      text = await readInput(file);
    } catch (error) {
      throw new UsageError(`--input-file: cannot read ${file}: ${(error as Error).message}`);
    }
    input = jsonOption(`--input-file ${file}`, text);
  }
  const client = clientOf(values);
  const r = (await request(client, "POST", "/workflows/start", {
    ...namespaced(values.namespace),
    name: positionals[0],
    ...(values.version === undefined ? {} : { version: values.version }),
    input,
    ...(values["workflow-id"] === undefined ? {} : { workflow_id: values["workflow-id"] }),
  })) as { namespace: string; workflow_id: string; run_id: string; created: boolean };
  if (wait === undefined) {
    emit(io, mode, r, () =>
      fields([
        ["workflow id", r.workflow_id],
        ["run id", r.run_id],
        ["namespace", r.namespace],
        ["created", r.created],
      ]),
    );
    return 0;
  }
  // Start and await: print the run as describe does, once it ended or the wait ran out.
  const d = (await request(client, "POST", "/workflows/describe", {
    namespace: r.namespace,
    workflow_id: r.workflow_id,
    run_id: r.run_id,
    wait_ms: wait,
  })) as DescribeAnswer;
  emit(io, mode, d.run, () =>
    describeText(d.run, d.pending_activities, d.pending_total, d.workspaces ?? []),
  );
  return d.run.status === "Failed" || d.run.status === "Cancelled" ? 1 : 0;
}

async function definitions(rest: readonly string[], io: Io): Promise<number> {
  const { values } = parseOptions(rest, common, { max: 0 });
  const mode = outputMode(values.output);
  const namespace = namespaceOption(values.namespace);
  const query = namespace === undefined ? "" : `?namespace=${encodeURIComponent(namespace)}`;
  const r = (await request(clientOf(values), "GET", `/workflows/definitions${query}`)) as {
    definitions: DefinitionJson[];
  };
  emitLines(io, mode, r.definitions, () => definitionsTable(r.definitions));
  return 0;
}

async function describe(rest: readonly string[], io: Io) {
  const { values, positionals } = parseOptions(
    rest,
    { ...common, "run-id": { type: "string" }, wait: { type: "string", short: "w" } },
    { min: 1, max: 1 },
  );
  const mode = outputMode(values.output);
  const wait = values.wait === undefined ? undefined : waitMs(values.wait);
  const r = (await request(clientOf(values), "POST", "/workflows/describe", {
    ...namespaced(values.namespace),
    workflow_id: positionals[0],
    ...(values["run-id"] === undefined ? {} : { run_id: values["run-id"] }),
    ...(wait === undefined ? {} : { wait_ms: wait }),
  })) as DescribeAnswer;
  emit(io, mode, describeJson(r), () =>
    describeText(r.run, r.pending_activities, r.pending_total, r.workspaces ?? []),
  );
  return 0;
}

/** Reads the history page by page, following `next`, so a long one is never one answer. */
async function history(rest: readonly string[], io: Io) {
  const { values, positionals } = parseOptions(
    rest,
    {
      ...common,
      "run-id": { type: "string" },
      limit: { type: "string" },
      wait: { type: "string", short: "w" },
    },
    { min: 1, max: 1 },
  );
  const mode = outputMode(values.output);
  if (values.wait !== undefined) throw new UsageError("--wait goes with start and describe only");
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !Number.isInteger(limit)) {
    throw new UsageError("--limit must be a whole number");
  }
  const client = clientOf(values);
  const events: Record<string, unknown>[] = [];
  let after: number | null = 0;
  while (after !== null) {
    const r = (await request(client, "POST", "/workflows/history", {
      ...namespaced(values.namespace),
      workflow_id: positionals[0],
      ...(values["run-id"] === undefined ? {} : { run_id: values["run-id"] }),
      after,
      ...(limit === undefined ? {} : { limit }),
    })) as { events: Record<string, unknown>[]; next: number | null };
    // JSON lines go out as each page arrives; the text table needs every row for its widths.
    if (mode === "text") events.push(...r.events);
    else emitLines(io, mode, r.events, () => "");
    after = r.next;
  }
  if (mode === "text") emitLines(io, mode, events, () => historyTable(events));
  return 0;
}

async function list(rest: readonly string[], io: Io): Promise<number> {
  const { values } = parseOptions(
    rest,
    {
      ...common,
      status: { type: "string" },
      order: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
    },
    { max: 0 },
  );
  const mode = outputMode(values.output);
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit)) throw new UsageError("--limit must be a whole number");
  }
  if (values.order !== undefined && values.order !== "oldest" && values.order !== "newest") {
    throw new UsageError(`--order must be oldest or newest, found ${JSON.stringify(values.order)}`);
  }
  const r = (await request(clientOf(values), "POST", "/workflows/list", {
    ...namespaced(values.namespace),
    ...(values.status === undefined ? {} : { status: values.status }),
    ...(values.order === undefined ? {} : { order: values.order }),
    ...(limit === undefined ? {} : { limit }),
    ...(values.cursor === undefined ? {} : { cursor: values.cursor }),
  })) as { runs: RunJson[]; next_cursor: string | null };
  emitLines(io, mode, r.runs, () => runsTable(r.runs));
  if (r.next_cursor !== null) io.err(`next cursor: ${r.next_cursor}`);
  return 0;
}

async function control(verb: string, rest: readonly string[], io: Io): Promise<number> {
  const signal = verb === "signal";
  const { values, positionals } = parseOptions(
    rest,
    { ...common, "run-id": { type: "string" }, payload: { type: "string" } },
    { min: signal ? 2 : 1, max: signal ? 2 : 1 },
  );
  const mode = outputMode(values.output);
  if (!signal && values.payload !== undefined) {
    throw new UsageError("--payload goes with signal only");
  }
  const payload = values.payload === undefined ? null : jsonOption("--payload", values.payload);
  const r = (await request(clientOf(values), "POST", `/workflows/${verb}`, {
    ...namespaced(values.namespace),
    workflow_id: positionals[0],
    ...(values["run-id"] === undefined ? {} : { run_id: values["run-id"] }),
    ...(signal ? { signal: positionals[1], payload } : {}),
  })) as { applied: boolean; status: string };
  emit(io, mode, r, () =>
    r.applied
      ? `${verb}: applied (status ${r.status})`
      : `${verb}: not applied (status ${r.status})`,
  );
  return 0;
}

/** `--wait MS` of start and describe: whole milliseconds, at most the server's bound. */
function waitMs(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > DESCRIBE_WAIT_MAX_MS) {
    throw new UsageError(`--wait must be whole milliseconds from 0 to ${DESCRIBE_WAIT_MAX_MS}`);
  }
  return Number(text);
}
