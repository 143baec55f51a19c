/**
 * The service file's embedding group. Fourteen required fields enable local embeddings;
 * omitting them all disables embedding. Giving any of them, any window setting or
 * `embed_writer_wait_ms` requires the whole group (`missing embed settings` lists what is
 * absent). The restart settings and `embed_question_worker` have their own defaults and do
 * not by themselves ask for the group. Window settings exist only with `embed_windows`
 * true, where they default to 32 windows and 64 overlap tokens. Rules that need the model
 * (token capacity, the largest answer frame) are checked by the worker after start-up.
 */

import {
  absolutePath,
  boolean,
  child,
  durationMs,
  integer,
  largestRepresentable,
  optional,
  type Path,
  type RawObject,
  refuse,
  string,
  u32,
  u64,
  usize,
  withCode,
  withDefault,
} from "../../common/decode/index.ts";
import type { EmbedSettings } from "./types.ts";

export const EMBED_LIMITS = "embed_limits";

const required = {
  embed_worker: absolutePath({ reason: "embed_worker must be an absolute path" }),
  embed_model_dir: withCode(absolutePath({ reason: "embed_limits: model_dir must be absolute" }), {
    shape: EMBED_LIMITS,
  }),
  embed_model_sha256: string(),
  embed_memory_bytes: withCode(u64({ min: 1 }), { range: EMBED_LIMITS }),
  embed_threads: withCode(u64({ min: 1 }), { range: EMBED_LIMITS }),
  embed_batch_items: withCode(usize({ min: 1 }), { range: EMBED_LIMITS }),
  embed_input_bytes: u64({ min: 1 }),
  embed_tokens: u64({ min: 1 }),
  embed_frame_bytes: u32({ min: 8192 }),
  embed_ready_ms: durationMs(),
  embed_call_ms: durationMs(),
  embed_waiting: usize({ min: 1 }),
  embed_request_items: usize({ min: 1 }),
  embed_page_records: integer("u32", { min: 1, max: 1024 }),
};

export const EMBED_REQUIRED_FIELDS = Object.keys(required) as (keyof typeof required)[];
/** Fields that, like the required ones, ask for the whole group when given. */
export const EMBED_GROUP_TRIGGERS = [
  ...EMBED_REQUIRED_FIELDS,
  "embed_windows",
  "embed_max_windows",
  "embed_window_overlap_tokens",
  "embed_writer_wait_ms",
];

export const EMBED_DEFAULTS = {
  embed_writer_wait_ms: 1000n,
  embed_windows: false,
  embed_max_windows: 32n,
  embed_window_overlap_tokens: 64n,
  embed_restart_ms: 1000n,
  embed_restart_most_ms: 300000n,
  embed_question_worker: true,
} as const;

/** The group's fields as they appear at the top level of the service file. */
export const embedShape = {
  embed_worker: optional(required.embed_worker),
  embed_model_dir: optional(required.embed_model_dir),
  embed_model_sha256: optional(required.embed_model_sha256),
  embed_memory_bytes: optional(required.embed_memory_bytes),
  embed_threads: optional(required.embed_threads),
  embed_batch_items: optional(required.embed_batch_items),
  embed_input_bytes: optional(required.embed_input_bytes),
  embed_tokens: optional(required.embed_tokens),
  embed_frame_bytes: optional(required.embed_frame_bytes),
  embed_ready_ms: optional(required.embed_ready_ms),
  embed_call_ms: optional(required.embed_call_ms),
  embed_waiting: optional(required.embed_waiting),
  embed_request_items: optional(required.embed_request_items),
  embed_page_records: optional(required.embed_page_records),
  embed_writer_wait_ms: withDefault(durationMs(), EMBED_DEFAULTS.embed_writer_wait_ms),
  embed_windows: withDefault(boolean(), EMBED_DEFAULTS.embed_windows),
  embed_max_windows: optional(u64({ min: 2, max: 1024 })),
  embed_window_overlap_tokens: optional(u64()),
  embed_restart_ms: withDefault(durationMs(), EMBED_DEFAULTS.embed_restart_ms),
  embed_restart_most_ms: withDefault(durationMs(), EMBED_DEFAULTS.embed_restart_most_ms),
  embed_question_worker: withDefault(boolean(), EMBED_DEFAULTS.embed_question_worker),
};

/** Any trigger field asks for all fourteen required fields. */
export function inspectEmbedGroup(raw: RawObject, path: Path): void {
  if (!EMBED_GROUP_TRIGGERS.some((f) => Object.hasOwn(raw, f))) return;
  const absent = EMBED_REQUIRED_FIELDS.filter((f) => !Object.hasOwn(raw, f));
  if (absent.length > 0) refuse("missing", path, `missing embed settings: ${absent.join(", ")}`);
}

type EmbedFlat = {
  [K in keyof typeof embedShape]: (typeof embedShape)[K] extends { absent: (p: Path) => infer T }
    ? T
    : never;
};

/** Rules across the group's fields; run on the decoded values. */
export function checkEmbedGroup(flat: EmbedFlat, path: Path): void {
  if (!flat.embed_windows) {
    for (const f of ["embed_max_windows", "embed_window_overlap_tokens"] as const) {
      if (flat[f] !== undefined) refuse("rule", child(path, f), "requires embed_windows true");
    }
  } else if (flat.embed_tokens !== undefined) {
    const overlap = flat.embed_window_overlap_tokens ?? EMBED_DEFAULTS.embed_window_overlap_tokens;
    if (overlap >= flat.embed_tokens) {
      refuse(
        "rule",
        child(path, "embed_window_overlap_tokens"),
        `embed_limits: must be below embed_tokens (${flat.embed_tokens}), found ${overlap}`,
        EMBED_LIMITS,
      );
    }
  }
  if (flat.embed_windows && flat.embed_call_ms !== undefined) {
    // A windowed document call allows embed_call_ms for each possible window; that
    // deadline, too, must be representable on the monotonic clock.
    const windows = flat.embed_max_windows ?? EMBED_DEFAULTS.embed_max_windows;
    const largest = largestRepresentable("ms");
    if (flat.embed_call_ms * windows > largest) {
      refuse(
        "clock",
        child(path, "embed_call_ms"),
        `times ${windows} windows cannot be represented by the monotonic clock (at most ${largest / windows} ms per window), found ${flat.embed_call_ms}`,
      );
    }
  }
  if (flat.embed_restart_most_ms < flat.embed_restart_ms) {
    refuse(
      "rule",
      child(path, "embed_restart_most_ms"),
      `must be at least embed_restart_ms (${flat.embed_restart_ms}), found ${flat.embed_restart_most_ms}`,
    );
  }
}

/** The group as one value, or null when embedding is disabled. */
export function collectEmbed(flat: EmbedFlat): EmbedSettings | null {
  if (flat.embed_worker === undefined) return null;
  const windows = flat.embed_windows;
  return {
    embed_worker: flat.embed_worker,
    embed_model_dir: flat.embed_model_dir!,
    embed_model_sha256: flat.embed_model_sha256!,
    embed_memory_bytes: flat.embed_memory_bytes!,
    embed_threads: flat.embed_threads!,
    embed_batch_items: flat.embed_batch_items!,
    embed_input_bytes: flat.embed_input_bytes!,
    embed_tokens: flat.embed_tokens!,
    embed_frame_bytes: flat.embed_frame_bytes!,
    embed_ready_ms: flat.embed_ready_ms!,
    embed_call_ms: flat.embed_call_ms!,
    embed_waiting: flat.embed_waiting!,
    embed_request_items: flat.embed_request_items!,
    embed_page_records: flat.embed_page_records!,
    embed_writer_wait_ms: flat.embed_writer_wait_ms,
    embed_windows: windows,
    embed_max_windows: windows
      ? (flat.embed_max_windows ?? EMBED_DEFAULTS.embed_max_windows)
      : null,
    embed_window_overlap_tokens: windows
      ? (flat.embed_window_overlap_tokens ?? EMBED_DEFAULTS.embed_window_overlap_tokens)
      : null,
    embed_restart_ms: flat.embed_restart_ms,
    embed_restart_most_ms: flat.embed_restart_most_ms,
    embed_question_worker: flat.embed_question_worker,
  };
}
