/**
 * Namespace endpoints (spec endpoints 9-11). `POST /namespaces` decodes `{name}` (trimmed;
 * empty refused with `invalid_namespace_name`), requires a bearer whose grants include that
 * name, and answers `{name, created}`: idempotent, 200 either way, and independent of
 * `namespaces.auto_create`. `GET /namespaces` and `GET /namespaces/records` list only the
 * namespaces the caller's grants cover; records add the durable fields and the effective
 * settings.
 */

import type { FastifyInstance } from "fastify";
import { object } from "../../common/decode/index.ts";
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
}
