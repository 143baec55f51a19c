/**
 * The worker deployment record: what a PUT body says (artifact, namespaces, task_queue,
 * desired, node), what the server adds when it stores one (its own binary identity, the
 * worker document's name and kind, a launch revision) and how both are decoded. A body is
 * decoded once at the HTTP edge; a stored row is decoded when read, and a row that no longer
 * decodes is reported as undecodable with the reason instead of failing the read.
 */

import {
  array,
  DecodeError,
  type Decoder,
  decode,
  nullable,
  object,
  oneOf,
  parseJson,
  refine,
  string,
  u32,
  withDefault,
} from "../../common/decode/index.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";

export const DESIRED_STATES = ["running", "stopped"] as const;
export type Desired = (typeof DESIRED_STATES)[number];

/** Names beginning with this prefix are reserved for deployments the server makes itself. */
export const RESERVED_PREFIX = "auto/";
export const MAX_DEPLOYMENT_NAME_BYTES = 255;
export const MAX_VERB_ARGS = 64;

/** A deployment name as it appears in a path: 1..255 bytes, no control characters. */
export const deploymentName: Decoder<string> = refine(
  string({
    minBytes: 1,
    maxBytes: MAX_DEPLOYMENT_NAME_BYTES,
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    pattern: /^[^\u0000-\u001f\u007f]+$/,
    patternReason: "must not contain control characters",
    expected: "deployment name",
  }),
  (name) =>
    name.startsWith(RESERVED_PREFIX)
      ? `names beginning ${JSON.stringify(RESERVED_PREFIX)} are reserved`
      : undefined,
  { code: "reserved_deployment_name" },
);

const artifact = object({
  type: refine(
    string(),
    (type) =>
      type === "builtin" ? undefined : `only "builtin" is accepted, found ${JSON.stringify(type)}`,
    { code: "unsupported_artifact" },
  ),
  verb: array(string({ minBytes: 1, maxBytes: 4096 }), { min: 1, max: MAX_VERB_ARGS }),
});

const desired = oneOf(DESIRED_STATES);
const nodeName = string({ minBytes: 1, maxBytes: 255, expected: "node id" });

/** The body of `PUT /worker-deployments/{name}`. */
export const deploymentBody = object({
  artifact,
  namespaces: array(namespaceName(), { min: 1, max: 256 }),
  task_queue: string({ minBytes: 1, maxBytes: 256, expected: "task queue" }),
  desired,
  node: withDefault(nullable(nodeName), null),
});
export type DeploymentBody = ReturnType<typeof deploymentBody.run>;

/** The body of `POST /worker-deployments/{name}/desired-state`. */
export const desiredStateBody = object({ desired });

/** The server binary that launches the worker: `path` runs `entry` with the verb. */
export interface BinaryIdentity {
  readonly path: string;
  readonly entry: string;
  readonly version: string;
  /** sha256 of the entry file, hex. */
  readonly entry_sha256: string;
}

const binary = object({
  path: string({ minBytes: 1 }),
  entry: string({ minBytes: 1 }),
  version: string({ minBytes: 1 }),
  entry_sha256: string({ pattern: /^[0-9a-f]{64}$/, patternReason: "must be sha256 hex" }),
});

/** The stored record: the body plus what the server captured when it stored it. */
const storedDocument = object({
  artifact,
  namespaces: array(namespaceName(), { min: 1, max: 256 }),
  task_queue: string({ minBytes: 1, maxBytes: 256 }),
  desired,
  node: nullable(nodeName),
  /** Increments whenever the launch (everything but `desired`) changes. */
  revision: u32({ min: 1 }),
  binary,
  worker: object({ kind: string({ minBytes: 1 }), name: string({ minBytes: 1 }) }),
});
export type StoredDocument = ReturnType<typeof storedDocument.run>;

export interface Deployment extends StoredDocument {
  readonly name: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface Undecodable {
  readonly name: string;
  readonly reason: string;
}

/** Decodes a stored row's text; a refusal becomes a reason, never an exception. */
export function decodeStored(
  name: string,
  text: string,
  times: { createdAt: number; updatedAt: number },
): { ok: true; deployment: Deployment } | { ok: false; undecodable: Undecodable } {
  try {
    const result = decode(storedDocument, parseJson(text));
    if (!result.ok) return { ok: false, undecodable: { name, reason: result.error.message } };
    return { ok: true, deployment: { name, ...result.value, ...times } };
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    return { ok: false, undecodable: { name, reason: error.message } };
  }
}

/** The stored text of a record: fields in a fixed order, so equal records give equal text. */
export function encodeStored(doc: StoredDocument): string {
  return JSON.stringify({
    artifact: { type: doc.artifact.type, verb: doc.artifact.verb },
    namespaces: doc.namespaces,
    task_queue: doc.task_queue,
    desired: doc.desired,
    node: doc.node,
    revision: doc.revision,
    binary: {
      path: doc.binary.path,
      entry: doc.binary.entry,
      version: doc.binary.version,
      entry_sha256: doc.binary.entry_sha256,
    },
    worker: { kind: doc.worker.kind, name: doc.worker.name },
  });
}

/** Whether two records launch the same process (everything except `desired`). */
export function sameLaunch(a: StoredDocument, b: Omit<StoredDocument, "revision">): boolean {
  const launch = (d: Omit<StoredDocument, "revision">) =>
    JSON.stringify([d.artifact, d.namespaces, d.task_queue, d.node, d.binary, d.worker]);
  return launch(a) === launch(b);
}

/** The response form of a record. */
export function deploymentJson(d: Deployment) {
  return {
    name: d.name,
    artifact: { type: d.artifact.type, verb: d.artifact.verb },
    namespaces: d.namespaces,
    task_queue: d.task_queue,
    node: d.node,
    desired: d.desired,
    revision: d.revision,
    binary: d.binary,
    worker: d.worker,
    created_at: new Date(d.createdAt).toISOString(),
    updated_at: new Date(d.updatedAt).toISOString(),
  };
}
