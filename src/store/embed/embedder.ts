/**
 * What the embedding walk asks of the embedding service: the model's identity, the
 * settings, the writer gate, and vectors for texts. service.ts implements it and starts the
 * walk (walk.ts) with itself; the walk depends on this interface only, so neither module
 * imports the other's.
 */

import type { SkeinError } from "../../common/errors.ts";
import type { EmbedSettings } from "../config/types.ts";
import type { WriterGate } from "./writer-gate.ts";

export type EmbedKind = "document" | "question";

/** One text's vectors: one per window (one when windows are off, and for questions). */
export type TextVectors =
  | { readonly ok: true; readonly windows: Float32Array[] }
  | { readonly ok: false; readonly refusal: SkeinError };

export interface Embedder {
  /** The model manifest's sha256, as the worker's Ready said. */
  readonly identity: string;
  readonly settings: EmbedSettings;
  readonly gate: WriterGate;
  embed(kind: EmbedKind, texts: readonly string[]): Promise<TextVectors[]>;
}
