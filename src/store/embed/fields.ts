/**
 * Embedded fields and where their vectors live. `embed.enable` records a binding
 * (collection → field path, model identity) in the registry collection `~embed`. A
 * field's vectors live in the companion collection `COLLECTION~embed`, one branch per data
 * branch, one record per data key: raw float32 bytes behind a window count (companions.ts;
 * stores written before hold base64 JSON, read alike). Names with `~` are refused by the
 * socket's decoders, so clients can neither write nor shadow them; only the walk writes them.
 *
 * Each companion commit names, in its author, the data state it mirrors (the progress
 * marker): `{"at":V,"branch":B}` when complete at data version V of branch B, plus `to`
 * and `cursor` (a diff under way) or `to` and `after` (a listing under way). So a past
 * data version's vectors are the companion version whose marker is complete at it, and a
 * walk resumes after a crash from the companion head: the page it was on is redone, none
 * before it.
 */

import type { SkeinError } from "../../common/errors.ts";
import { storeError } from "../errors.ts";

export const REGISTRY = "~embed";
export const MARKER_PREFIX = "skein-embed ";

export function companionOf(collection: string): string {
  return `${collection}~embed`;
}

export interface Binding {
  readonly field: string;
  readonly model: string;
}

/**
 * `embed_model_change_not_available` when `collection`'s field was embedded with another
 * model than the store's (`identity`), else undefined. Vectors of two models are not
 * comparable, so such a field is neither embedded further nor searched by vector: no
 * question of one model is ever ranked against vectors of another.
 */
export function modelChange(
  collection: string,
  binding: Binding,
  identity: string,
): SkeinError | undefined {
  if (binding.model === identity) return undefined;
  return storeError(
    "embed_model_change_not_available",
    `${collection}.${binding.field} is embedded with model ${binding.model}, not the store's ${identity}`,
  );
}

export interface Marker {
  /** The data version mirrored (0: nothing yet). */
  readonly at: number;
  /** The data branch `at` belongs to. */
  readonly branch: string;
  /** While a pass is under way: the data version it brings the companion to. */
  readonly to?: number;
  /** A diff under way: changes.list's cursor. */
  readonly cursor?: string;
  /** A listing under way: the last key done. */
  readonly after?: string;
  /** Vectors in the companion after this commit. */
  readonly count: number;
}

export function markerAuthor(marker: Marker): string {
  return MARKER_PREFIX + JSON.stringify(marker);
}

export function parseMarker(author: string | undefined): Marker | undefined {
  if (author === undefined || !author.startsWith(MARKER_PREFIX)) return undefined;
  try {
    return JSON.parse(author.slice(MARKER_PREFIX.length)) as Marker;
  } catch {
    return undefined;
  }
}

/** Most segments of a field path: deeper JSON is not a field a person names. */
export const FIELD_PATH_MAX_SEGMENTS = 16;

/**
 * A field path: `$.a.b`, `a.b` or `a[0].b` (object members by name, array items by index).
 * Returns the segments; refuses anything else as invalid_request.
 */
export function parseFieldPath(path: string): (string | number)[] {
  if (!FIELD_PATH.test(path)) {
    throw storeError(
      "invalid_request",
      `field ${JSON.stringify(path)} is not a path like $.a.b or a[0].b`,
    );
  }
  const body = path.startsWith("$.") ? path.slice(2) : path;
  const segments = [...body.matchAll(/[A-Za-z0-9_-]+|\[(\d+)\]/g)].map((m) =>
    m[1] === undefined ? m[0] : Number(m[1]),
  );
  if (segments.length > FIELD_PATH_MAX_SEGMENTS) {
    throw storeError("invalid_request", `field has more than ${FIELD_PATH_MAX_SEGMENTS} segments`);
  }
  return segments;
}

const FIELD_PATH = /^(\$\.)?[A-Za-z0-9_-]+(\[\d+\])*(\.[A-Za-z0-9_-]+(\[\d+\])*)*$/;

/** The text at `path` in `value`, or undefined when absent or not a string. */
export function fieldText(value: unknown, path: readonly (string | number)[]): string | undefined {
  let at: unknown = value;
  for (const segment of path) {
    if (at === null || typeof at !== "object") return undefined;
    if (typeof segment === "number") {
      if (!Array.isArray(at)) return undefined;
      at = at[segment];
    } else {
      if (Array.isArray(at) || !Object.hasOwn(at, segment)) return undefined;
      at = (at as Record<string, unknown>)[segment];
    }
  }
  return typeof at === "string" ? at : undefined;
}
