/**
 * A companion collection's state as the rest of the store reads it (fields.ts describes the
 * companion): the marker on its branch head (how far the walk has embedded that branch),
 * the field bindings in the registry, and the stored form of a record's vectors. Search
 * and the embedding verbs read these; the walk writes them.
 *
 * A record's vectors are stored as raw bytes (a binary leaf item, no JSON): the window
 * count as a little-endian uint32, then every window's little-endian float32 components,
 * one window after another, so dims = (bytes − 4) / 4 / windows. Stores written before
 * hold `{"windows":N,"data":BASE64}` JSON records of the same float32 bytes; every reader
 * takes both (`storedVectors`), so such a store is searched as it is, never rewritten, and
 * a record the walk embeds again is written in the raw form.
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

/** Bytes before the float32 components of a stored record: the window count (uint32 LE). */
export const VECTORS_HEADER_BYTES = 4;

/** A record's windows in the stored form (raw bytes, above). */
export function encodeVectors(windows: readonly Float32Array[]): Uint8Array {
  const dims = windows[0]?.length ?? 0;
  const out = new Uint8Array(VECTORS_HEADER_BYTES + windows.length * dims * 4);
  new DataView(out.buffer).setUint32(0, windows.length, true);
  // Little-endian float32, copied in bulk (every platform Skein runs on is little-endian);
  // the header is 4 bytes, so the components of a fresh buffer are aligned.
  const all = new Float32Array(out.buffer, VECTORS_HEADER_BYTES, windows.length * dims);
  windows.forEach((v, w) => {
    all.set(v, w * dims);
  });
  return out;
}

/** A stored record's window count and its windows' little-endian float32 bytes. */
export interface StoredVectors {
  readonly windows: number;
  /** windows × dims × 4 bytes; a view, not necessarily 4-byte aligned. */
  readonly bytes: Uint8Array;
}

/**
 * The vectors of a companion record in either stored form: raw bytes (as an item or a
 * value), or the earlier `{windows, data}` JSON (as its text or its value).
 */
export function storedVectors(stored: unknown): StoredVectors {
  if (stored instanceof Uint8Array) {
    if (stored.byteLength < VECTORS_HEADER_BYTES) return { windows: 0, bytes: stored };
    const windows =
      (stored[0]! | (stored[1]! << 8) | (stored[2]! << 16) | (stored[3]! << 24)) >>> 0;
    return { windows, bytes: stored.subarray(VECTORS_HEADER_BYTES) };
  }
  const { windows, data } = (typeof stored === "string" ? JSON.parse(stored) : stored) as {
    windows: number;
    data: string;
  };
  return { windows, bytes: Buffer.from(data, "base64") };
}

/** A stored record's windows as numbers (`embed.vectors`). */
export function decodeVectors(stored: unknown): number[][] {
  const { windows, bytes } = storedVectors(stored);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dims = windows === 0 ? 0 : bytes.byteLength / 4 / windows;
  return Array.from({ length: windows }, (_, w) =>
    Array.from({ length: dims }, (_, d) => view.getFloat32((w * dims + d) * 4, true)),
  );
}
