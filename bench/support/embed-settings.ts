/**
 * The embedding settings the store benchmarks share: generous bounds, so that a figure
 * measures the walk and the workers, never a limit. Each bench names its worker and model
 * and overrides what it measures (batch sizes, queue depth, the question worker).
 */

import type { EmbedSettings } from "../../src/store/config/types.ts";

export function benchEmbedSettings(
  worker: string,
  modelDir: string,
  identity: string,
  overrides: Partial<EmbedSettings> = {},
): EmbedSettings {
  return {
    embed_worker: worker,
    embed_model_dir: modelDir,
    embed_model_sha256: identity,
    embed_memory_bytes: 4n << 30n,
    embed_threads: 1n,
    embed_batch_items: 32n,
    embed_input_bytes: 8192n,
    embed_tokens: 128n,
    embed_frame_bytes: 16 << 20,
    embed_ready_ms: 120_000n,
    embed_call_ms: 120_000n,
    embed_waiting: 64n,
    embed_request_items: 1024n,
    embed_page_records: 1024,
    embed_writer_wait_ms: 10_000n,
    embed_windows: false,
    embed_max_windows: null,
    embed_window_overlap_tokens: null,
    embed_restart_ms: 1000n,
    embed_restart_most_ms: 300_000n,
    embed_question_worker: true,
    ...overrides,
  };
}
