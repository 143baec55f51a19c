/**
 * Namespace endpoints (spec endpoints 9-11). `POST /namespaces` decodes `{name}` (trimmed;
 * empty refused with `invalid_namespace_name`), requires a bearer whose grants include that
 * name, and answers `{name, created}`: idempotent, 200 either way, and independent of
 * `namespaces.auto_create`. `GET /namespaces` and `GET /namespaces/records` list only the
 * namespaces the caller's grants cover; records add the durable fields and the effective
 * settings. `GET /namespaces/records/{name}` is one record with what the namespace holds
 * (runs by status, definition versions); `DELETE /namespaces/{name}` deletes an empty
 * namespace and its definitions (409 `namespace_not_empty` while it has runs). Both need
 * the bearer's grant on that name, checked before the name is looked up, so a caller
 * learns nothing of namespaces outside its grants.
 */

import type { FastifyInstance, FastifyRequest } from "fastify";
import { decodeOrThrow, object } from "../../common/decode/index.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";
import { canAccessNamespace } from "../auth/tokens.ts";
import type { NamespaceRegistry, NamespaceView } from "../namespaces/registry.ts";
import { forbidden, principalOf } from "./auth.ts";

const createBody = object({ name: namespaceName() });

export function recordJson(view: NamespaceView) {
  return {
    name: view.name,
    created_at: new Date(view.createdAt).toISOString(),
    created_by: view.createdBy,
    settings: {
      max_in_flight_activities: view.maxInFlightActivities,
      ceiling_in_force: view.ceilingInForce,
    },
  };
}

/** The `{name}` path segment, decoded as a body's name is, once the grant on it is checked. */
function grantedName(request: FastifyRequest): string {
  const name = decodeOrThrow(namespaceName(), (request.params as { name: string }).name, {
    parent: undefined,
    key: "name",
  });
  if (!canAccessNamespace(principalOf(request), name)) {
    forbidden(`the bearer's grants do not include namespace ${JSON.stringify(name)}`);
  }
  return name;
}

export function namespaceRoutes(app: FastifyInstance, registry: NamespaceRegistry): void {
  app.post(
    "/namespaces",
    { config: { api: { summary: "Create a namespace (idempotent)", body: createBody } } },
    async (request) => {
      const body = createBody.run(request.body, undefined);
      const principal = principalOf(request);
      if (!canAccessNamespace(principal, body.name)) {
        forbidden(`the bearer's grants do not include namespace ${JSON.stringify(body.name)}`);
      }
      const { namespace, created } = await registry.create(body.name, principal.subject);
      return { name: namespace.name, created };
    },
  );

  app.get(
    "/namespaces",
    { config: { api: { summary: "List the namespaces the caller can access" } } },
    async (request) => {
      const principal = principalOf(request);
      const views = await registry.list((name) => canAccessNamespace(principal, name));
      return { namespaces: views.map((v) => ({ name: v.name })) };
    },
  );

  app.get(
    "/namespaces/records",
    { config: { api: { summary: "List namespace records with their effective settings" } } },
    async (request) => {
      const principal = principalOf(request);
      const views = await registry.list((name) => canAccessNamespace(principal, name));
      return { records: views.map(recordJson) };
    },
  );

  app.get(
    "/namespaces/records/:name",
    {
      config: {
        api: { summary: "Describe one namespace: its record, runs by status, definitions" },
      },
    },
    async (request) => {
      const { view, usage } = await registry.describe(grantedName(request));
      return {
        ...recordJson(view),
        runs: Object.fromEntries(usage.runs),
        definitions: usage.definitions,
      };
    },
  );

  app.delete(
    "/namespaces/:name",
    { config: { api: { summary: "Delete a namespace (refused while it has runs)" } } },
    async (request) => {
      const { view, definitions } = await registry.delete(grantedName(request));
      return { deleted: true, record: recordJson(view), definitions_deleted: definitions };
    },
  );
}
