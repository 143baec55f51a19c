/**
 * The embedding verbs' handlers, kept beside the service so the verb table stays thin:
 * `embed.texts` answers vectors directly (as arrays of numbers, one per window).
 */

import { storeError } from "../errors.ts";
import type { EmbedService } from "./service.ts";

export interface TextsAnswer {
  readonly model: string;
  readonly dims: number;
  /** Per text, its windows' vectors (one vector when windows are off, and for questions). */
  readonly vectors: number[][][];
}

export async function embedTexts(
  service: EmbedService | null,
  kind: "document" | "question",
  texts: readonly string[],
): Promise<TextsAnswer> {
  if (service === null) throw storeError("embed_disabled");
  const results = await service.embed(kind, texts);
  const vectors = results.map((result, i) => {
    if (!result.ok) {
      throw storeError(
        "windows_over_cap",
        `text ${i} needs ${result.windows} windows; embed_max_windows is ${service.settings.embed_max_windows}`,
      );
    }
    return result.windows.map((v) => Array.from(v));
  });
  return { model: service.identity, dims: service.dims ?? 0, vectors };
}
