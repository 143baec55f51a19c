/**
 * The worker document: `{ name, task_queue, actions: { NAME: {...} } }` in YAML or JSON,
 * whose action shape depends on the worker kind (`exec`, `module`, `http`). It is read and
 * decoded once at start-up (an `agent` document's actions are agents or `exec` tools), every action's handler is built (a module is imported, so a
 * wrong path fails here), and any refusal names the field: `actions.greet.command: must not
 * be empty`. Relative paths in actions resolve against the document's folder.
 */

import { dirname, resolve } from "node:path";
import {
  type Decoder,
  decode,
  type JsonSchema,
  object,
  oneOf,
  optional,
  refine,
  string,
  stringMap,
  withCode,
  withDefault,
} from "../common/decode/index.ts";
import { formatOf, parseDocumentText } from "../common/document-text.ts";
import { SkeinError } from "../common/errors.ts";
import { FileRefused, readBoundedFile } from "../common/files.ts";
import type { AgentLink } from "./agent-link.ts";
import type { Handler } from "./handler.ts";
import { agentHandler } from "./kinds/agent/loop.ts";
import { prepareMcpServers } from "./kinds/agent/mcp/tools.ts";
import { agentSpec, type ExecTool } from "./kinds/agent/spec.ts";
import { execAction, execHandler } from "./kinds/exec.ts";
import { httpAction, httpHandler } from "./kinds/http.ts";
import { moduleAction, moduleHandler } from "./kinds/module.ts";

const DOCUMENT_CODE = "worker_document_invalid";

/** The largest worker document read; real ones are a few KiB, agent prompts included. */
export const MAX_WORKER_DOCUMENT_BYTES = 1_048_576;

export const WORKER_KINDS = ["exec", "module", "http", "agent"] as const;
export type WorkerKind = (typeof WORKER_KINDS)[number];

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const nameString = string({
  minBytes: 1,
  maxBytes: 256,
  pattern: NAME,
  patternReason: "must be letters, digits, '.', '_' or '-', starting with a letter or digit",
});

function documentDecoder<A>(action: Decoder<A>) {
  return withCode(
    object({
      name: nameString,
      task_queue: nameString,
      actions: stringMap(action, { min: 1, max: 4096, key: nameString }),
    }),
    DOCUMENT_CODE,
  );
}

/** An `agent` document's action: an agent loop, or an `exec` tool the agents may call. */
const agentAction = refine(
  object({
    description: withDefault(string({ maxBytes: 4096 }), ""),
    approval: withDefault(oneOf(["none", "required"]), "none"),
    agent: optional(agentSpec),
    exec: optional(execAction),
  }),
  (a) =>
    (a.agent === undefined) === (a.exec === undefined)
      ? "must have exactly one of agent or exec"
      : undefined,
);

/** Each kind's document decoder (the schemas under schemas/ are made from these). */
export const WORKER_DOCUMENT_DECODERS = {
  agent: documentDecoder(agentAction),
  exec: documentDecoder(execAction),
  module: documentDecoder(moduleAction),
  http: documentDecoder(httpAction),
};

/**
 * The JSON Schema of a `kind` worker document, made from the decoder that loads it (for
 * editor completion; looser where a rule spans fields: an agent action's agent-or-exec).
 */
export function workerDocumentSchema(kind: WorkerKind): JsonSchema {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: `Skein ${kind} worker document`,
    ...WORKER_DOCUMENT_DECODERS[kind].schema,
  };
}

export interface WorkerDocument {
  readonly kind: WorkerKind;
  readonly path: string;
  readonly name: string;
  readonly taskQueue: string;
  readonly handlers: ReadonlyMap<string, Handler>;
}

/** The document's text: a regular file of at most MAX_WORKER_DOCUMENT_BYTES, read in bounded time. */
async function readText(full: string): Promise<string> {
  try {
    return (await readBoundedFile(full, { maxBytes: MAX_WORKER_DOCUMENT_BYTES })).toString("utf8");
  } catch (error) {
    if (!(error instanceof FileRefused)) throw error;
    throw new SkeinError(DOCUMENT_CODE, `cannot read worker document: ${error.reason}`);
  }
}

async function readDocument(path: string): Promise<{ full: string; raw: unknown }> {
  const full = resolve(path);
  return { full, raw: parseDocumentText(await readText(full), formatOf(full), DOCUMENT_CODE) };
}

/** The top-level fields every worker document has; a file without them is not one. */
const DOCUMENT_FIELDS = ["name", "task_queue", "actions"] as const;

function looksLikeWorkerDocument(raw: unknown): boolean {
  return (
    typeof raw === "object" &&
    raw !== null &&
    !Array.isArray(raw) &&
    DOCUMENT_FIELDS.every((field) => Object.hasOwn(raw, field))
  );
}

/**
 * Reads and decodes a worker document without preparing its handlers: nothing of the
 * document is run (a `module` action's module is not imported). The server uses it to
 * check a deployment against the document it will launch, for a client who may name any
 * path: so its refusals name the file and never quote it. A syntax error gives only its
 * position; a file without the worker document's fields is "not a worker document" (its
 * keys are its contents); only a file shaped like a worker document gets the field refusals.
 * Refusals do not repeat the path; the caller names it.
 */
export async function inspectWorkerDocument(
  kind: WorkerKind,
  path: string,
): Promise<{ readonly name: string; readonly taskQueue: string; readonly actions: string[] }> {
  const full = resolve(path);
  const format = formatOf(full);
  const text = await readText(full);
  let raw: unknown;
  try {
    raw = parseDocumentText(text, format, DOCUMENT_CODE);
  } catch (error) {
    if (!(error instanceof SkeinError)) throw error;
    const at = syntaxPosition(error.message);
    throw new SkeinError(
      DOCUMENT_CODE,
      `not valid ${format === "json" ? "JSON" : "YAML"}${at === undefined ? "" : ` (${at})`}`,
    );
  }
  if (!looksLikeWorkerDocument(raw)) {
    throw new SkeinError(
      DOCUMENT_CODE,
      `not a worker document (an object with ${DOCUMENT_FIELDS.join(", ")})`,
    );
  }
  const doc = decodeDocument<{ name: string; task_queue: string; actions: Map<string, unknown> }>(
    WORKER_DOCUMENT_DECODERS[kind] as Decoder<{
      name: string;
      task_queue: string;
      actions: Map<string, unknown>;
    }>,
    raw,
  );
  return { name: doc.name, taskQueue: doc.task_queue, actions: [...doc.actions.keys()] };
}

/** Where a parser stopped, as the parsers word it (`line 2, column 1`, `position 4`). */
function syntaxPosition(message: string): string | undefined {
  return /line \d+, column \d+|position \d+/.exec(message)?.[0];
}

/** Reads, decodes and prepares a worker document; throws SkeinError/DecodeError. */
export async function loadWorkerDocument(
  kind: WorkerKind,
  path: string,
  options: { readonly agentLink?: AgentLink } = {},
): Promise<WorkerDocument> {
  const { full, raw } = await readDocument(path);
  const baseDir = dirname(full);
  const handlers = new Map<string, Handler>();
  let name: string;
  let taskQueue: string;
  switch (kind) {
    case "exec": {
      const doc = decodeDocument(WORKER_DOCUMENT_DECODERS.exec, raw);
      for (const [action, spec] of doc.actions) handlers.set(action, execHandler(spec, baseDir));
      ({ name, task_queue: taskQueue } = doc);
      break;
    }
    case "module": {
      const doc = decodeDocument(WORKER_DOCUMENT_DECODERS.module, raw);
      for (const [action, spec] of doc.actions) {
        handlers.set(action, await moduleHandler(action, spec, baseDir));
      }
      ({ name, task_queue: taskQueue } = doc);
      break;
    }
    case "http": {
      const doc = decodeDocument(WORKER_DOCUMENT_DECODERS.http, raw);
      for (const [action, spec] of doc.actions) handlers.set(action, httpHandler(spec));
      ({ name, task_queue: taskQueue } = doc);
      break;
    }
    case "agent": {
      const doc = decodeDocument(WORKER_DOCUMENT_DECODERS.agent, raw);
      const tools: ExecTool[] = [];
      for (const [action, spec] of doc.actions) {
        if (spec.exec === undefined) continue;
        const handler = execHandler(spec.exec, baseDir);
        handlers.set(action, handler);
        tools.push({
          kind: "exec",
          name: action,
          description: spec.description,
          approval: spec.approval === "required",
          handler,
        });
      }
      for (const [action, spec] of doc.actions) {
        if (spec.agent === undefined) continue;
        const named = spec.agent.tools;
        for (const tool of named ?? []) {
          if (!tools.some((t) => t.name === tool)) {
            throw new SkeinError(
              DOCUMENT_CODE,
              `actions.${action}.agent.tools: ${JSON.stringify(tool)} is not an exec action of this document`,
            );
          }
        }
        const own = tools.filter((t) => named === undefined || named.includes(t.name));
        const servers = await prepareMcpServers(spec.agent.mcp, baseDir).catch((error: unknown) => {
          if (!(error instanceof SkeinError)) throw error;
          throw new SkeinError(DOCUMENT_CODE, `actions.${action}.agent.mcp: ${error.message}`);
        });
        handlers.set(action, agentHandler(spec.agent, own, servers, options.agentLink));
      }
      ({ name, task_queue: taskQueue } = doc);
      break;
    }
  }
  return { kind, path: full, name, taskQueue, handlers };
}

function decodeDocument<T>(decoder: Decoder<T>, raw: unknown): T {
  const result = decode(decoder, raw);
  if (!result.ok) throw result.error;
  return result.value;
}
