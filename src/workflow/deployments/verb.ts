/**
 * Checks that a deployment's verb launches a builtin worker that agrees with its record:
 * the word `worker`, a known kind, an absolute path of a worker document that exists on
 * this host, then only the known option pairs with values of the right type (the worker
 * command's own parser decides, so the two can never disagree), plus `--token-file`. The
 * document is read and decoded as the worker would (without running any of it: a `module`
 * action's module is not imported into the server); its `task_queue` must equal the record's,
 * and the namespace the worker will serve (`--namespace`, default `default`) must be one of
 * the record's `namespaces`. Every refusal is `invalid_deployment` with the reason.
 */

import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { inspectWorkerDocument, WORKER_KINDS, type WorkerKind } from "../../worker/document.ts";
import { parseWorkerArgs } from "../cli/worker.ts";
import { workflowError } from "../errors.ts";
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

export async function checkVerb(body: DeploymentBody): Promise<CheckedVerb> {
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
  if (parsed.tokenFile !== undefined && !existsSync(parsed.tokenFile)) {
    refuse(`--token-file ${parsed.tokenFile} does not exist on the server host`);
  }
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
