/**
 * The placement API: the store's app client registers each collection and branch under its
 * database (`PUT`) and removes them (`DELETE`; removing a collection removes its branches).
 * Placing a branch places its collection too, so a branch is never placed under nothing.
 * Only the app client of database D may touch D's placements: any other valid pass gets
 * 403 `app_credential_required`. While the operator has frozen the database's placements
 * (`skein-idp placement freeze`), a `PUT` is refused 409 `placement_frozen`. Path segments
 * are percent-encoded store names.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { MAX_PLACEMENT_BODY_BYTES } from "../bounds.ts";
import type { CallerAuthenticator } from "../caller.ts";
import { idpError } from "../errors.ts";
import { readBody, sendJson } from "../http/io.ts";
import { isDatabaseName, isStoreName } from "../names.ts";
import type { IdpState } from "../state/state.ts";

export const PLACEMENT_PREFIX = "/placement/v1/databases/";

interface PlacementPath {
  readonly database: string;
  readonly collection: string;
  readonly branch: string | undefined;
}

function segment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw idpError("invalid_request", "a path segment is not valid percent-encoding");
  }
}

/** Parses `D/collections/C[/branches/B]` (after the prefix); undefined when it is not one. */
export function parsePlacementPath(rest: string): PlacementPath | undefined {
  const parts = rest.split("/");
  const shaped =
    (parts.length === 3 || (parts.length === 5 && parts[3] === "branches")) &&
    parts[1] === "collections";
  if (!shaped) return undefined;
  const database = segment(parts[0]!);
  const collection = segment(parts[2]!);
  const branch = parts.length === 5 ? segment(parts[4]!) : undefined;
  if (!isDatabaseName(database)) {
    throw idpError("invalid_request", "database must be letters, digits, _ or -");
  }
  if (!isStoreName(collection) || (branch !== undefined && !isStoreName(branch))) {
    throw idpError("invalid_request", "collection and branch must be letters, digits, _, - or .");
  }
  return { database, collection, branch };
}

export class PlacementRoutes {
  readonly #state: IdpState;
  readonly #callers: CallerAuthenticator;
  readonly #log: (event: Record<string, unknown>, message: string) => void;

  constructor(
    state: IdpState,
    callers: CallerAuthenticator,
    log: (event: Record<string, unknown>, message: string) => void,
  ) {
    this.#state = state;
    this.#callers = callers;
    this.#log = log;
  }

  async handle(request: IncomingMessage, response: ServerResponse, rest: string): Promise<void> {
    const caller = await this.#callers.authenticate(request);
    const path = parsePlacementPath(rest);
    if (path === undefined) throw idpError("not_found");
    if (request.method !== "PUT" && request.method !== "DELETE") {
      throw idpError("method_not_allowed");
    }
    if (caller.kind !== "app" || caller.database !== path.database) {
      throw idpError("app_credential_required");
    }
    await readBody(request, MAX_PLACEMENT_BODY_BYTES);
    const { database, collection, branch } = path;
    if (request.method === "PUT") {
      // Checked on every placement (the CLI writes the flag while the server runs); removals
      // stay allowed, so a store's deletes are never refused.
      if (this.#state.placementsFrozen(database)) {
        this.#log({ database, collection, branch }, "placement refused: frozen");
        throw idpError("placement_frozen");
      }
      const created = this.#state.place(database, collection, branch);
      this.#log({ database, collection, branch, created }, "placed");
      sendJson(response, 200, { placed: true, created });
    } else {
      const removed = this.#state.unplace(database, collection, branch);
      this.#log({ database, collection, branch, removed }, "placement removed");
      sendJson(response, 200, { removed });
    }
  }
}
