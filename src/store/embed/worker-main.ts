/**
 * The shipped embedding worker: reads its model directory (SKEIN_EMBED_MODEL_DIR), checks
 * the manifest and every file's sha256, loads the tokenizer (@huggingface/tokenizers) and
 * the ONNX graph (onnxruntime-node, `embed_threads` intra-op threads), checks the store's
 * limits against the model, says `ready`, then embeds batches: tokens without the
 * tokenizer's own specials, then [start] prefix content [end] per window, the graph's
 * `last_hidden_state` pooled (mean over the attention mask, or the first token) and
 * L2-normalised as the manifest says. After each batch it checks its resident memory
 * against `embed_memory_bytes` and exits when above it (the store restarts it).
 */

import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import ort from "onnxruntime-node";
import { decodeOrThrow } from "../../common/decode/decoder.ts";
import { encodeJsonFrame, JsonFrameReader } from "./frames.ts";
import {
  ACTIVATION_VALUES_PER_TOKEN_DIM,
  MODEL_MEMORY_FACTOR,
  PROCESS_BASE_BYTES,
  START_FRAME_BYTES,
} from "./limits.ts";
import { fileSha256, type Manifest, manifestIdentity, readManifest } from "./manifest.ts";
import {
  COMPONENT_BYTES,
  EMBED_PROTOCOL,
  largestAnswerBytes,
  type StartMessage,
  type VectorsItem,
  type WorkerInput,
  workerInput,
} from "./protocol.ts";
import { windowCount, windowSpans } from "./windows.ts";

class StartFailure extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export interface Model {
  readonly manifest: Manifest;
  readonly tokenizer: Tokenizer;
  readonly session: ort.InferenceSession;
  readonly start: number;
  readonly end: number;
  readonly prefix: { readonly document: number[]; readonly question: number[] };
  readonly capacity: { readonly document: number; readonly question: number };
  readonly limits: StartMessage;
}

export function runEmbedWorker(): void {
  const dir = process.env.SKEIN_EMBED_MODEL_DIR ?? "";
  const reader = new JsonFrameReader(START_FRAME_BYTES);
  let model: Model | undefined;
  let work = Promise.resolve();
  const send = (message: unknown) => process.stdout.write(encodeJsonFrame(message));
  process.stdin.on("data", (chunk: Buffer) => {
    for (const event of reader.push(chunk)) {
      if (event.kind === "too_large") process.exit(3);
      const message = decodeOrThrow(workerInput, JSON.parse(event.payload.toString("utf8")));
      // One message at a time, in order: answers keep the order of the store's messages.
      work = work.then(async () => {
        if (message.type === "start") {
          model = await startModel(dir, message, send);
          if (model === undefined) process.exit(1);
          reader.limit = message.request_bytes;
        } else if (model !== undefined) {
          await embedBatch(model, message, send);
        }
      });
    }
  });
  process.stdin.on("end", () => process.exit(0));
}

async function startModel(
  dir: string,
  limits: StartMessage,
  send: (message: unknown) => void,
): Promise<Model | undefined> {
  try {
    const model = await loadModel(dir, limits);
    send({
      type: "ready",
      protocol: EMBED_PROTOCOL,
      identity: manifestIdentity(model.manifest),
      dims: model.manifest.dims,
      max_tokens: model.manifest.max_tokens,
      content_tokens: model.capacity.document,
    });
    return model;
  } catch (error) {
    const code = error instanceof StartFailure ? error.code : "embed_worker_failed";
    send({ type: "failed", code, message: (error as Error).message.slice(0, 4000) });
    return undefined;
  }
}

/** Loads and checks a model; exported for `bench:embed`'s in-process reference. */
export async function loadModel(dir: string, limits: StartMessage): Promise<Model> {
  let manifest: Manifest;
  try {
    manifest = await readManifest(dir);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new StartFailure("embed_model_missing", `manifest.json: ${reason}`);
  }
  let modelBytes = 0;
  for (const [name, sha] of Object.entries(manifest.files)) {
    let actual: string;
    try {
      actual = await fileSha256(join(dir, name));
      if (name === manifest.model) modelBytes = (await stat(join(dir, name))).size;
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
      throw new StartFailure("embed_model_missing", `${name}: ${reason}`);
    }
    if (actual !== sha) {
      throw new StartFailure("embed_model_mismatch", `${name}: its sha256 is not the manifest's`);
    }
  }
  if (!Object.hasOwn(manifest.files, manifest.model)) {
    throw new StartFailure(
      "embed_model_missing",
      `the manifest lists no hash of ${manifest.model}`,
    );
  }
  const tokenizer = new Tokenizer(
    JSON.parse(await readFile(join(dir, manifest.tokenizer), "utf8")),
    {},
  );
  const start = tokenId(tokenizer, manifest.special_tokens.start);
  const end = tokenId(tokenizer, manifest.special_tokens.end);
  const prefix = {
    document: encode(tokenizer, manifest.prefix.document),
    question: encode(tokenizer, manifest.prefix.question),
  };
  const capacity = checkLimits(manifest, limits, prefix, modelBytes);
  const session = await ort.InferenceSession.create(join(dir, manifest.model), {
    intraOpNumThreads: limits.threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
  return { manifest, tokenizer, session, start, end, prefix, capacity, limits };
}

function tokenId(tokenizer: Tokenizer, token: string): number {
  const id = tokenizer.token_to_id(token);
  if (id === undefined) {
    throw new StartFailure(
      "embed_limits",
      `special token ${JSON.stringify(token)} is not in the vocabulary`,
    );
  }
  return id;
}

function encode(tokenizer: Tokenizer, text: string): number[] {
  return text === "" ? [] : tokenizer.encode(text, { add_special_tokens: false }).ids;
}

/** The spec's model rules for the store's limits; the content tokens a window holds. */
function checkLimits(
  manifest: Manifest,
  limits: StartMessage,
  prefix: Model["prefix"],
  modelBytes: number,
): Model["capacity"] {
  const refuse = (reason: string): never => {
    throw new StartFailure("embed_limits", reason);
  };
  const tokens = limits.tokens;
  if (tokens > manifest.max_tokens) {
    refuse(`embed_tokens ${tokens} is above the model's maximum of ${manifest.max_tokens} tokens`);
  }
  const longest = Math.max(prefix.document.length, prefix.question.length);
  // Two special tokens (start and end), the prefix, and at least one content token.
  if (tokens < 2 + longest + 1) {
    refuse(
      `embed_tokens ${tokens} leaves no content token after 2 special and ${longest} prefix tokens`,
    );
  }
  const capacity = {
    document: tokens - 2 - prefix.document.length,
    question: tokens - 2 - prefix.question.length,
  };
  const windows = limits.windows?.max ?? 1;
  if (limits.windows !== null && limits.windows.overlap >= capacity.document) {
    refuse(
      `embed_window_overlap_tokens ${limits.windows.overlap} is not below the ${capacity.document} content tokens of a window`,
    );
  }
  const answer = largestAnswerBytes(manifest.dims, limits.batch_items, windows);
  if (answer > limits.frame_bytes) {
    refuse(
      `embed_frame_bytes ${limits.frame_bytes} cannot hold the largest answer (${manifest.dims} dims × ${limits.batch_items} items × ${windows} windows: ${answer} bytes)`,
    );
  }
  const activations =
    limits.batch_items * tokens * manifest.dims * ACTIVATION_VALUES_PER_TOKEN_DIM * COMPONENT_BYTES;
  const needed = PROCESS_BASE_BYTES + modelBytes * MODEL_MEMORY_FACTOR + activations;
  if (needed > limits.memory_bytes) {
    refuse(
      `embed_memory_bytes ${limits.memory_bytes} is below the ${needed} bytes the model and a full batch need`,
    );
  }
  return capacity;
}

/** One row of the graph's input: a window's tokens with the start and end tokens. */
interface Row {
  readonly item: number;
  readonly ids: number[];
}

async function embedBatch(
  model: Model,
  message: Extract<WorkerInput, { type: "embed" }>,
  send: (message: unknown) => void,
): Promise<void> {
  try {
    const items = await embedTexts(model, message.kind, message.texts);
    send({ type: "vectors", id: message.id, items });
  } catch (error) {
    send({
      type: "error",
      id: message.id,
      code: "embed_worker_failed",
      message: (error as Error).message.slice(0, 4000),
    });
  }
  const rss = process.memoryUsage.rss();
  if (rss > model.limits.memory_bytes) {
    process.stderr.write(
      `skein-embed-worker: resident memory ${rss} is above embed_memory_bytes ${model.limits.memory_bytes}; exiting\n`,
    );
    process.exit(4);
  }
}

/** One batch's answer items; the bench's in-process reference runs it without the pipe. */
export async function embedTexts(
  model: Model,
  kind: "document" | "question",
  texts: readonly string[],
): Promise<VectorsItem[]> {
  const windows = kind === "document" ? model.limits.windows : null;
  const capacity = model.capacity[kind];
  const items: (VectorsItem | undefined)[] = [];
  const rows: Row[] = [];
  texts.forEach((text, item) => {
    const content = encode(model.tokenizer, text);
    const overlap = windows?.overlap ?? 0;
    // A question is never truncated: a search would answer for a question it was not asked.
    if (kind === "question" && content.length > capacity) {
      items[item] = { kind: "too_long", tokens: content.length, most: capacity };
      return;
    }
    const count = windows === null ? 1 : windowCount(content.length, capacity, overlap);
    if (windows !== null && count > windows.max) {
      items[item] = { kind: "refused", code: "windows_over_cap", windows: count };
      return;
    }
    const spans =
      windows === null
        ? [{ start: 0, end: Math.min(content.length, capacity) }]
        : windowSpans(content.length, capacity, overlap);
    for (const span of spans) {
      rows.push({
        item,
        ids: [
          model.start,
          ...model.prefix[kind],
          ...content.slice(span.start, span.end),
          model.end,
        ],
      });
    }
  });
  const dims = model.manifest.dims;
  const vectors = new Map<number, Float32Array[]>();
  // At most embed_batch_items rows per run: the memory check at start assumed no more.
  for (let at = 0; at < rows.length; at += model.limits.batch_items) {
    const chunk = rows.slice(at, at + model.limits.batch_items);
    const pooled = await runRows(model, chunk);
    chunk.forEach((row, i) => {
      const list = vectors.get(row.item) ?? [];
      list.push(pooled.subarray(i * dims, (i + 1) * dims));
      vectors.set(row.item, list);
    });
  }
  return texts.map((_, item) => {
    const done = items[item];
    if (done !== undefined) return done;
    const list = vectors.get(item)!;
    const data = Buffer.alloc(list.length * dims * COMPONENT_BYTES);
    list.forEach((v, w) => {
      for (let d = 0; d < dims; d++) data.writeFloatLE(v[d]!, (w * dims + d) * COMPONENT_BYTES);
    });
    return { kind: "vectors", windows: list.length, data: data.toString("base64") };
  });
}

/** Runs the graph on padded rows; returns the pooled vectors, `dims` per row. */
async function runRows(model: Model, rows: readonly Row[]): Promise<Float32Array> {
  const width = Math.max(...rows.map((r) => r.ids.length));
  const n = rows.length;
  const ids = new BigInt64Array(n * width);
  const mask = new BigInt64Array(n * width);
  rows.forEach((row, r) => {
    row.ids.forEach((id, t) => {
      ids[r * width + t] = BigInt(id);
      mask[r * width + t] = 1n;
    });
  });
  const shape = [n, width];
  const feeds: Record<string, ort.Tensor> = {};
  for (const name of model.session.inputNames) {
    if (name === "input_ids") feeds[name] = new ort.Tensor("int64", ids, shape);
    else if (name === "attention_mask") feeds[name] = new ort.Tensor("int64", mask, shape);
    else feeds[name] = new ort.Tensor("int64", new BigInt64Array(n * width), shape);
  }
  const outputs = await model.session.run(feeds);
  const hidden = outputs[model.session.outputNames[0]!]!;
  const dims = model.manifest.dims;
  if (hidden.dims.length !== 3 || hidden.dims[2] !== dims) {
    throw new Error(`the model answered shape [${hidden.dims.join(", ")}], not [.., .., ${dims}]`);
  }
  return pool(hidden.data as Float32Array, rows, width, dims, model.manifest);
}

function pool(
  hidden: Float32Array,
  rows: readonly Row[],
  width: number,
  dims: number,
  manifest: Manifest,
): Float32Array {
  const out = new Float32Array(rows.length * dims);
  rows.forEach((row, r) => {
    const tokens = manifest.pooling === "cls" ? 1 : row.ids.length;
    for (let t = 0; t < tokens; t++) {
      const base = (r * width + t) * dims;
      for (let d = 0; d < dims; d++) out[r * dims + d]! += hidden[base + d]!;
    }
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      out[r * dims + d]! /= tokens;
      norm += out[r * dims + d]! ** 2;
    }
    if (manifest.normalize && norm > 0) {
      const scale = 1 / Math.sqrt(norm);
      for (let d = 0; d < dims; d++) out[r * dims + d]! *= scale;
    }
  });
  return out;
}
