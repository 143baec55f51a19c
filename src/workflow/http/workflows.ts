/**
 * Workflow endpoints: `POST /workflows/definitions|start|describe|list|history` and the
 * controls `POST /workflows/signal|pause|resume|cancel`, each with
 * `namespace` in the body (omitted: `namespaces.default`). Handlers are thin: decode the
 * body once, check the bearer's namespace grant (403 otherwise), make one registry or run
 * service call, encode. Registering and starting are work in the namespace, so they go
 * through `registry.use` (created when absent and `auto_create` is open, refused with
 * `namespace_not_found` when closed); reads never create a namespace. JSON payloads (run
 * input and output, event payloads) are stored as text and written back as raw JSON, so
 * numbers come back exactly as they were sent. `list` filters (status, definition name,
 * start time) are conditions of one store query, listed oldest or newest first (the cursor
 * and its order in run-cursor.ts); the encoders are in run-json.ts, the versions read, the
 * live streams and their bounds in definition-versions.ts, streams.ts and sse.ts.
 */

import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  type Decoder,
  durationMs,
  integer,
  map,
  object,
  oneOf,
  optional,
  refine,
  string,
  withDefault,
} from "../../common/decode/index.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";
import { canAccessNamespace } from "../auth/tokens.ts";
import { workflowError } from "../errors.ts";
import type { NamespaceRegistry } from "../namespaces/registry.ts";
import type { DefinitionRegistry } from "../runs/definitions.ts";
import { DESCRIBE_WAIT_MAX_MS } from "../runs/ends.ts";
import { PENDING_LISTED_MAX } from "../runs/pending.ts";
import type { RunService } from "../runs/service.ts";
import { type RunTranscripts, runWorkspaces } from "../runs/workspaces.ts";
import { forbidden, principalOf } from "./auth.ts";
import { exactNumbers, jsonText, listText } from "./json.ts";
import { encodeRunCursor, listOrder, runCursor, runOrder } from "./run-cursor.ts";
import { controlJson, eventJson, pendingJson, runJson, runText } from "./run-json.ts";
import type { TaskQueueReader } from "./task-queues.ts";

/** Bounds of one `list` page. */
export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const uuid = () =>
  string({
    pattern: UUID,
    patternReason: "must be a UUID string",
    expected: "UUID string",
    format: "uuid",
  });

/** Any JSON value, as parsed (lossless numbers kept). */
const anyJson: Decoder<unknown> = {
  expected: "any JSON value",
  run: (value) => value,
  schema: { description: "any JSON value" },
};

/** A definition as text (YAML or JSON, per `format`) or as a JSON object. */
export const definitionBody = object({
  namespace: optional(namespaceName()),
  definition: anyJson,
  format: withDefault(oneOf(["yaml", "json"]), "yaml"),
});

export const startBody = object({
  namespace: optional(namespaceName()),
  name: string({ minBytes: 1, expected: "definition name" }),
  /** A registered version (`sha256:…`); absent: the latest registered of `name`. */
  version: optional(string({ minBytes: 1, expected: "definition version" })),
  input: withDefault(anyJson, {}),
  workflow_id: optional(uuid()),
  /** A run deadline (ms from the start): when reached, the run is cancelled (`deadline`). */
  deadline_ms: optional(map(durationMs({ max: Number.MAX_SAFE_INTEGER }), Number)),
});

export const runBody = object({
  namespace: optional(namespaceName()),
  workflow_id: uuid(),
  run_id: optional(uuid()),
});

/** The most events one history answer holds; a longer history is read in pages (`next`). */
export const HISTORY_PAGE_MAX = 10_000;

export const historyBody = object({
  namespace: optional(namespaceName()),
  workflow_id: uuid(),
  run_id: optional(uuid()),
  /** How many events the client has already read: the index of the first one answered. */
  after: withDefault(integer("u32"), 0),
  limit: withDefault(integer("u32", { min: 1, max: HISTORY_PAGE_MAX }), HISTORY_PAGE_MAX),
});

export const describeBody = object({
  namespace: optional(namespaceName()),
  workflow_id: uuid(),
  run_id: optional(uuid()),
  wait_ms: withDefault(integer("u32", { max: DESCRIBE_WAIT_MAX_MS }), 0),
});

export const signalBody = object({
  namespace: optional(namespaceName()),
  workflow_id: uuid(),
  run_id: optional(uuid()),
  signal: string({ minBytes: 1, maxBytes: 255, expected: "signal name" }),
  payload: withDefault(anyJson, null),
});

/** `GET /workflows/definitions?namespace=N`: the query string, decoded like a body. */
export const definitionsQuery = object({ namespace: optional(namespaceName()) });

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 time (`2026-05-01T12:00:00Z`, an offset or fraction allowed), as ms. */
const rfc3339: Decoder<number> = map(
  refine(
    string({
      pattern: RFC3339,
      patternReason: "must be an RFC 3339 time such as 2026-05-01T12:00:00Z",
      expected: "RFC 3339 time",
      format: "date-time",
    }),
    (text) => (Number.isNaN(Date.parse(text)) ? "is not a valid calendar time" : undefined),
  ),
  (text) => Date.parse(text),
);

export const listBody = object({
  namespace: optional(namespaceName()),
  status: optional(oneOf(["Running", "Paused", "Completed", "Failed", "Cancelled"])),
  /** A definition name: runs started from any of its versions. */
  definition: optional(string({ minBytes: 1, expected: "definition name" })),
  /** Runs started at or after this time. */
  started_after: optional(rfc3339),
  /** Runs started before this time. */
  started_before: optional(rfc3339),
  limit: withDefault(integer("u32", { min: 1, max: LIST_LIMIT_MAX }), LIST_LIMIT_DEFAULT),
  cursor: optional(runCursor),
  /** Absent: the cursor's order, or "oldest" without a cursor (run-cursor.ts). */
  order: optional(runOrder),
});

export interface WorkflowRoles {
  readonly namespaces: NamespaceRegistry;
  readonly definitions: DefinitionRegistry;
  readonly runs: RunService;
  /** The matcher's view of workers and queues, for describe's pending activities. */
  readonly queues?: TaskQueueReader;
  /** Stored agent transcripts, for describe's workspaces (runs/workspaces.ts). */
  readonly transcripts?: RunTranscripts;
}

/** The namespace a body means, after the bearer's grant on it is checked. */
export function grantedNamespace(
  roles: Pick<WorkflowRoles, "namespaces">,
  request: FastifyRequest,
  named: string | undefined,
): string {
  const namespace = roles.namespaces.resolve(named);
  if (!canAccessNamespace(principalOf(request), namespace)) {
    forbidden(`the bearer's grants do not include namespace ${JSON.stringify(namespace)}`);
  }
  return namespace;
}

export function workflowRoutes(app: FastifyInstance, roles: WorkflowRoles): void {
  app.post(
    "/workflows/definitions",
    {
      config: {
        api: {
          summary: "Register a workflow definition (YAML or JSON text, or a JSON object)",
          body: definitionBody,
        },
      },
    },
    async (request) => {
      const body = definitionBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      // Checked, decoded, and only then is the namespace used (created when open): a refused
      // document leaves no namespace behind.
      await roles.namespaces.admit(namespace);
      const definition = roles.definitions.decode(
        typeof body.definition === "string"
          ? { text: body.definition, format: body.format }
          : { value: body.definition },
      );
      await roles.namespaces.use(namespace, principalOf(request).subject);
      const { created } = await roles.definitions.register(
        namespace,
        definition,
        principalOf(request).subject,
      );
      return { namespace, name: definition.name, version: definition.version, created };
    },
  );

  app.post(
    "/workflows/start",
    { config: { api: { summary: "Start a run (idempotent on workflow_id)", body: startBody } } },
    async (request, reply) => {
      const body = startBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      // An unknown definition is refused before the namespace is used: a failed start never
      // creates its namespace. The namespace and the definition are read together (one
      // crossing to the storage thread, not three in a row); a namespace refusal still wins.
      const [admitted, found] = await Promise.allSettled([
        roles.namespaces.admit(namespace),
        body.version === undefined
          ? roles.definitions.latest(namespace, body.name)
          : roles.definitions.byVersion(namespace, body.version),
      ]);
      if (admitted.status === "rejected") throw admitted.reason;
      if (found.status === "rejected") throw found.reason;
      const definition = found.value;
      if (definition.name !== body.name) {
        throw workflowError(
          "definition_not_found",
          `version ${body.version} is definition ${JSON.stringify(definition.name)}, not ${JSON.stringify(body.name)}`,
        );
      }
      // An existing namespace is not read again: a delete takes its definitions with it, so
      // the definition just read shows it was there as much as a second read would (and a
      // delete racing the run's insert is possible either way).
      if (admitted.value === undefined) {
        await roles.namespaces.use(namespace, principalOf(request).subject);
      }
      const started = await roles.runs.start({
        namespace,
        definition,
        inputJson: JSON.stringify(body.input, exactNumbers),
        workflowId: body.workflow_id,
        deadlineMs: body.deadline_ms,
      });
      return jsonText(
        reply,
        `{"namespace":${JSON.stringify(namespace)},"workflow_id":"${started.workflowId}",` +
          `"run_id":"${started.runId}","definition_version":${JSON.stringify(definition.version)},` +
          `"created":${started.created}}`,
      );
    },
  );

  app.post(
    "/workflows/describe",
    {
      config: {
        api: {
          summary:
            "Describe a run with its pending activities, optionally waiting for its end (wait_ms)",
          body: describeBody,
        },
      },
    },
    async (request, reply) => {
      const body = describeBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      const transcripts = roles.transcripts;
      // Most runs have no agent attempt, so no transcript: then the history is read only
      // for a live run's pending activities, and no transcript is read.
      const [run, transcribed] = await roles.runs.describeWith(
        namespace,
        body.workflow_id,
        body.run_id,
        body.wait_ms,
        async (runId) => (transcripts === undefined ? [] : transcripts.attempts(runId)),
      );
      // One read of the history serves both: the pending activities and the workspaces.
      const events = transcribed.length === 0 ? undefined : await roles.runs.events(run);
      const pending = await roles.runs.pending(run, events);
      const workspaces =
        events === undefined
          ? []
          : await runWorkspaces(run.runId, events, transcripts!.read, transcribed);
      // Written as text (runText): the same answer as the reply serializer would write.
      return jsonText(
        reply,
        `{"run":${runText(run)},"pending_activities":${listText(pendingJson(run, pending.slice(0, PENDING_LISTED_MAX), roles.queues))},` +
          `"pending_total":${pending.length},"workspaces":${listText(workspaces)}}`,
      );
    },
  );

  app.get(
    "/workflows/definitions",
    {
      config: { api: { summary: "List the definitions registered in a namespace (?namespace=)" } },
    },
    async (request) => {
      const query = definitionsQuery.run(request.query, undefined);
      const namespace = grantedNamespace(roles, request, query.namespace);
      const definitions = await roles.definitions.list(namespace);
      // Decoded versions are cached, so each latest one is parsed once per server.
      const latest = await Promise.all(
        definitions.map((d) => roles.definitions.byVersion(namespace, d.version)),
      );
      return {
        namespace,
        definitions: definitions.map((d, i) => ({
          name: d.name,
          version: d.version,
          registered_at: new Date(d.registeredAt).toISOString(),
          registered_by: d.registeredBy,
          versions: d.versions,
          input_schema: latest[i]!.inputSchema?.schema ?? null,
        })),
      };
    },
  );

  app.post(
    "/workflows/list",
    {
      config: {
        api: {
          summary:
            "List runs of a namespace by start time (oldest or newest first), filtered, by pages",
          body: listBody,
        },
      },
    },
    async (request) => {
      const body = listBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      const order = listOrder(body.order, body.cursor);
      const page = await roles.runs.list({
        namespace,
        status: body.status,
        definition: body.definition,
        startedAfter: body.started_after,
        startedBefore: body.started_before,
        limit: body.limit,
        after: body.cursor?.position,
        order,
      });
      return {
        runs: page.runs.map(runJson),
        next_cursor: page.next === undefined ? null : encodeRunCursor(page.next, order),
      };
    },
  );

  app.post(
    "/workflows/history",
    { config: { api: { summary: "Read a page of a run's durable history", body: historyBody } } },
    async (request) => {
      const body = historyBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      // One event more than asked tells whether another page follows, without a count query.
      const { run, events } = await roles.runs.history(namespace, body.workflow_id, body.run_id, {
        after: body.after,
        limit: body.limit + 1,
      });
      const more = events.length > body.limit;
      if (more) events.length = body.limit;
      return {
        workflow_id: run.workflowId,
        run_id: run.runId,
        events: events.map(eventJson),
        next: more ? body.after + body.limit : null,
      };
    },
  );

  const CONTROL_SUMMARY = {
    cancel: "Cancel a run and its live descendants",
    pause: "Pause a Running run",
    resume: "Resume a Paused run",
  } as const;
  // Controls answer 200 with what they did: `applied` is false for a run that has ended (or
  // is already in the asked-for state), so cancelling a terminal run is a clear no-op.
  for (const kind of ["cancel", "pause", "resume"] as const) {
    app.post(
      `/workflows/${kind}`,
      { config: { api: { summary: CONTROL_SUMMARY[kind], body: runBody } } },
      async (request) => {
        const body = runBody.run(request.body, undefined);
        const namespace = grantedNamespace(roles, request, body.namespace);
        const done = await roles.runs.control(namespace, body.workflow_id, body.run_id, { kind });
        return controlJson(done);
      },
    );
  }

  app.post(
    "/workflows/signal",
    { config: { api: { summary: "Send a signal to a Running or Paused run", body: signalBody } } },
    async (request) => {
      const body = signalBody.run(request.body, undefined);
      const namespace = grantedNamespace(roles, request, body.namespace);
      const done = await roles.runs.control(namespace, body.workflow_id, body.run_id, {
        kind: "signal",
        signal: body.signal,
        payloadJson: JSON.stringify(body.payload, exactNumbers),
      });
      return controlJson(done);
    },
  );
}
