/**
 * `GET /workflows/definitions/versions?namespace=NS&name=NAME`: every registered version of
 * one definition name, the latest registered first (the one a start without `version`
 * runs, marked `latest`), each with its stored canonical document as JSON, so a console can
 * show what each version says and compare them. The query string is decoded like a body;
 * the bearer needs the namespace grant (403), an unknown name is 404 `definition_not_found`.
 */

import type { FastifyInstance } from "fastify";
import { object, optional, parseJson, string } from "../../common/decode/index.ts";
import { namespaceName } from "../../protocol/namespace-name.ts";
import type { NamespaceRegistry } from "../namespaces/registry.ts";
import type { DefinitionRegistry } from "../runs/definitions.ts";
import { grantedNamespace } from "./workflows.ts";

const versionsQuery = object({
  namespace: optional(namespaceName()),
  name: string({ minBytes: 1, expected: "definition name" }),
});

export function definitionVersionRoutes(
  app: FastifyInstance,
  roles: { readonly namespaces: NamespaceRegistry; readonly definitions: DefinitionRegistry },
): void {
  app.get(
    "/workflows/definitions/versions",
    {
      config: {
        api: {
          summary:
            "Every version of a definition name with its document, latest first (?namespace=&name=)",
        },
      },
    },
    async (request) => {
      const query = versionsQuery.run(request.query, undefined);
      const namespace = grantedNamespace(roles, request, query.namespace);
      const records = await roles.definitions.versions(namespace, query.name);
      return {
        namespace,
        name: query.name,
        versions: records.map((r, i) => ({
          version: r.version,
          registered_at: new Date(r.registeredAt).toISOString(),
          registered_by: r.registeredBy,
          latest: i === 0,
          // Parsed losslessly: numbers in the document come back exactly as stored.
          document: parseJson(r.canonical),
        })),
      };
    },
  );
}
