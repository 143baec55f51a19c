/**
 * A companion collection's state as the rest of the store reads it (fields.ts describes the
 * companion): the marker on its branch head (how far the walk has embedded that branch),
 * the field bindings in the registry, and the stored form of a record's vectors (base64 of
 * little-endian float32, one run per window). Search and the embedding verbs read these;
 * the walk writes them.
 */

import type { SkeinError } from "../../common/errors.ts";
import type { Store } from "../engine/index.ts";
import { type Binding, type Marker, parseMarker, REGISTRY } from "./fields.ts";

/** Rows per page when branch lists, histories and companion keys are read. */
export const SCAN_PAGE = 100;
/** The main branch, which every collection has. */
export const MAIN = "main";

/** The marker of a companion branch nothing is embedded on yet. */
export function emptyMarker(): Marker {
  return { at: 0, branch: MAIN, count: 0 };
}

/** The marker of the companion branch's head; undefined when the branch does not exist. */
export function companionMarker(
  store: Store,
  companion: string,
  branch: string,
): Marker | undefined {
  let head: { author: string } | undefined;
  try {
    head = store.history(companion, branch, undefined, 1).rows[0];
  } catch (error) {
    if ((error as SkeinError).code === "branch_not_found") return undefined;
    throw error;
  }
  return parseMarker(head?.author) ?? emptyMarker();
}

/** Bindings from the registry: collection → field and model. */
export function readBindings(store: Store): Map<string, Binding> {
  const out = new Map<string, Binding>();
  let after: string | undefined;
  try {
    do {
      const page = store.list({ collection: REGISTRY, branch: MAIN }, { after, limit: SCAN_PAGE });
      for (const row of page.rows) out.set(row.key, row.value as Binding);
      after = page.next ?? undefined;
    } while (after !== undefined);
  } catch (error) {
    if ((error as SkeinError).code === "collection_not_found") return out;
    throw error;
  }
  return out;
}

export function encodeVectors(windows: readonly Float32Array[]): { windows: number; data: string } {
  const dims = windows[0]?.length ?? 0;
  // Little-endian float32, copied in bulk (every platform Skein runs on is little-endian).
  const all = new Float32Array(windows.length * dims);
  windows.forEach((v, w) => {
    all.set(v, w * dims);
  });
  return { windows: windows.length, data: Buffer.from(all.buffer).toString("base64") };
}

export function decodeVectors(value: unknown): number[][] {
  const { windows, data } = value as { windows: number; data: string };
  const bytes = Buffer.from(data, "base64");
  const dims = bytes.length / 4 / windows;
  return Array.from({ length: windows }, (_, w) =>
    Array.from({ length: dims }, (_, d) => bytes.readFloatLE((w * dims + d) * 4)),
  );
}
