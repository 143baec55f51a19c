/**
 * Questions on their way to the question worker, gathered into batches: the worker embeds
 * one request at a time, so searches arriving while a batch is embedded go together in the
 * next one (at most `embed_request_items`) instead of one round trip each. At most
 * `embed_waiting` questions wait (more: `embed_busy`); a question above
 * `embed_input_bytes` is refused on its own (`embed_input_too_large`) before it waits, so
 * one bad question never fails the others of its batch.
 */

import type { EmbedService } from "../embed/service.ts";
import { storeError } from "../errors.ts";

interface Waiting {
  readonly text: string;
  readonly resolve: (vector: Float32Array) => void;
  readonly reject: (error: unknown) => void;
}

export class QuestionBatches {
  readonly #embed: EmbedService;
  readonly #waiting: Waiting[] = [];
  #running = false;

  constructor(embed: EmbedService) {
    this.#embed = embed;
  }

  /**
   * The question's vector (never windowed, never truncated: a question longer than the
   * model's window is `embed_input_too_large`, from the worker, which alone counts tokens).
   */
  ask(text: string): Promise<Float32Array> {
    const s = this.#embed.settings;
    const bytes = Buffer.byteLength(text);
    if (bytes > Number(s.embed_input_bytes)) {
      throw storeError(
        "embed_input_too_large",
        `the question is ${bytes} bytes; embed_input_bytes is ${s.embed_input_bytes}`,
      );
    }
    if (this.#waiting.length >= Number(s.embed_waiting)) {
      throw storeError("embed_busy", `embed_waiting (${s.embed_waiting}) questions already wait`);
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push({ text, resolve, reject });
      if (!this.#running) void this.#run();
    });
  }

  async #run(): Promise<void> {
    this.#running = true;
    const most = Math.max(1, Number(this.#embed.settings.embed_request_items));
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, most);
      try {
        const results = await this.#embed.embed(
          "question",
          batch.map((q) => q.text),
        );
        batch.forEach((q, i) => {
          const result = results[i];
          if (result?.ok && result.windows[0] !== undefined) q.resolve(result.windows[0]);
          else if (result?.ok === false) q.reject(result.refusal);
          else
            q.reject(storeError("embed_worker_failed", "the question worker answered no vector"));
        });
      } catch (error) {
        for (const q of batch) q.reject(error);
      }
    }
    this.#running = false;
  }
}
