/**
 * Checks that a deployment's verb launches a builtin worker that agrees with its record:
 * the word `worker`, a known kind, an absolute path of a worker document that exists on
 * this host, then only the known option pairs with values of the right type (the worker
 * command's own parser decides, so the two can never disagree), plus `--token-file`: a
 * regular file that is no credential of the server's own (`token_file_refused`). The
 * document is read and decoded as the worker would (without running any of it: a `module`
 * action's module is not imported into the server); its `task_queue` must equal the record's,
 * and the namespace the worker will serve (`--namespace`, default `default`) must be one of
 * the record's `namespaces`. Every other refusal is `invalid_deployment` with the reason;
 * reading the document is bounded and its refusals never quote it (worker/document.ts).
 */

import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { checkRegularFile, FileRefused } from "../../common/files.ts";
import { inspectWorkerDocument, WORKER_KINDS, type WorkerKind } from "../../worker/document.ts";
import { MAX_TOKEN_FILE_BYTES, parseWorkerArgs } from "../../worker/verb.ts";
import { workflowError } from "../errors.ts";
import { tokenFileRefusal } from "./credentials.ts";
import type { DeploymentBody } from "./record.ts";

export interface CheckedVerb {
  readonly kind: WorkerKind;
  /** The worker document's own name. */
  readonly workerName: string;
  readonly namespace: string;
}

function refuse(reason: string): never {
  throw workflowError("invalid_deployment", `artifact.verb: ${reason}`);
}

export async function checkVerb(body: DeploymentBody, dataDir: string): Promise<CheckedVerb> {
  const [word, kind, document, ...rest] = body.artifact.verb;
  if (word !== "worker") refuse(`must begin with the word "worker", found ${JSON.stringify(word)}`);
  if (kind === undefined || !(WORKER_KINDS as readonly string[]).includes(kind)) {
    refuse(
      `the worker kind must be one of ${WORKER_KINDS.join(", ")}, found ${JSON.stringify(kind ?? null)}`,
    );
  }
  if (document === undefined || document.startsWith("-"))
    refuse("the worker document path is missing");
  if (!isAbsolute(document))
    refuse(`the worker document path must be absolute, found ${JSON.stringify(document)}`);
  if (!existsSync(document))
    refuse(`the worker document ${document} does not exist on the server host`);
  let parsed: ReturnType<typeof parseWorkerArgs>;
  try {
    parsed = parseWorkerArgs([kind, document, ...rest]);
  } catch (error) {
    if (error instanceof UsageError) refuse(error.message);
    throw error;
  }
  if (parsed.document !== document) refuse("options must follow the kind and the document path");
  if (parsed.tokenFile !== undefined) await checkTokenFile(parsed.tokenFile, dataDir);
  if (!body.namespaces.includes(parsed.namespace)) {
    refuse(
      `--namespace ${JSON.stringify(parsed.namespace)} is not one of namespaces ${JSON.stringify(body.namespaces)}`,
    );
  }
  let loaded: Awaited<ReturnType<typeof inspectWorkerDocument>>;
  try {
    loaded = await inspectWorkerDocument(parsed.kind, document);
  } catch (error) {
    if (error instanceof SkeinError) refuse(`worker document ${document}: ${error.message}`);
    throw error;
  }
  if (loaded.taskQueue !== body.task_queue) {
    throw workflowError(
      "invalid_deployment",
      `task_queue: ${JSON.stringify(body.task_queue)} does not agree with the worker document's task_queue ${JSON.stringify(loaded.taskQueue)}`,
    );
  }
  return { kind: parsed.kind, workerName: loaded.name, namespace: parsed.namespace };
}

/**
 * The token file exists, is no credential of the server's own (credentials.ts) and is a
 * regular file of token size; it is not read here (the worker reads it when it starts).
 */
async function checkTokenFile(path: string, dataDir: string): Promise<void> {
  if (!existsSync(path)) refuse(`--token-file ${path} does not exist on the server host`);
  const reason = await tokenFileRefusal(path, dataDir);
  if (reason !== undefined) {
    throw workflowError("token_file_refused", `artifact.verb: --token-file ${path} ${reason}`);
  }
  try {
    await checkRegularFile(path, { maxBytes: MAX_TOKEN_FILE_BYTES });
  } catch (error) {
    if (error instanceof FileRefused) refuse(`--token-file ${path}: ${error.reason}`);
    throw error;
  }
}
