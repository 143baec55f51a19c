/**
 * The model manifest and the model's identity. A model directory holds `config.json`,
 * `tokenizer.json` and the ONNX graph at `onnx/model.onnx` (the layout of Hugging Face's
 * ONNX exports; `model.onnx` at the top is accepted too), and `manifest.json`: every file's
 * sha256, the dimensions, the maximum tokens, the special tokens that open and close a
 * sequence, the prefix texts for documents and questions, and the pooling. The identity
 * (`embed_model_sha256`) is the sha256 of the canonical manifest: its JSON with keys sorted
 * and no whitespace, so it names the files' contents and every setting that changes a
 * vector. Both the store (`skein-store model manifest`) and the worker use this module;
 * the worker runs under Node's permission model, so it imports decode modules one by one.
 */

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { access, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringMap } from "../../common/decode/collections.ts";
import type { Decoded } from "../../common/decode/decoder.ts";
import { decodeOrThrow, map } from "../../common/decode/decoder.ts";
import { integer } from "../../common/decode/numbers.ts";
import { object } from "../../common/decode/objects.ts";
import { boolean, oneOf, string } from "../../common/decode/strings.ts";

export const MANIFEST_FILE = "manifest.json";
/** The manifest format this build reads and writes. */
export const MANIFEST_FORMAT = 1;
/** Where the ONNX graph may be, in order of preference. */
export const MODEL_FILES = ["onnx/model.onnx", "model.onnx"] as const;
export const TOKENIZER_FILE = "tokenizer.json";
export const CONFIG_FILE = "config.json";
/** Largest manifest read: it lists a handful of files, so anything larger is not one. */
export const MANIFEST_MAX_BYTES = 65536;
/** Most dimensions accepted: above the largest sentence-embedding models by far. */
export const MODEL_MAX_DIMS = 65536;
/** Most tokens a manifest may name: far above any sentence-embedding model's window. */
export const MODEL_MAX_TOKENS = 1 << 20;

const sha256Hex = string({
  pattern: /^[0-9a-f]{64}$/,
  patternReason: "must be 64 lowercase hex digits",
});

const description = {
  dims: integer("u32", { min: 1, max: MODEL_MAX_DIMS }),
  max_tokens: integer("u32", { min: 1, max: MODEL_MAX_TOKENS }),
  special_tokens: object({ start: string({ maxBytes: 64 }), end: string({ maxBytes: 64 }) }),
  prefix: object({ document: string({ maxBytes: 256 }), question: string({ maxBytes: 256 }) }),
  pooling: oneOf(["mean", "cls"] as const),
  normalize: boolean(),
};

export const manifestDecoder = object({
  format: integer("u32", { min: MANIFEST_FORMAT, max: MANIFEST_FORMAT }),
  model: oneOf(MODEL_FILES),
  tokenizer: oneOf([TOKENIZER_FILE] as const),
  // A plain object, not a Map: the identity is the canonical JSON of the decoded manifest.
  files: map(stringMap(sha256Hex, { min: 1, max: 16 }), (m) => Object.fromEntries(m)),
  ...description,
});

export type Manifest = Decoded<typeof manifestDecoder>;
export type ModelDescription = Pick<Manifest, keyof typeof description>;

/** JSON with object keys sorted at every depth and no whitespace. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    const record = value as Record<string, unknown>;
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export function manifestIdentity(manifest: Manifest): string {
  return createHash("sha256").update(canonicalJson(manifest)).digest("hex");
}

export function fileSha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

/** The model file present in `dir`, or undefined. */
export async function findModelFile(
  dir: string,
): Promise<(typeof MODEL_FILES)[number] | undefined> {
  for (const name of MODEL_FILES) {
    try {
      await access(join(dir, name));
      return name;
    } catch {}
  }
  return undefined;
}

/** Hashes the directory's files, writes `manifest.json` (canonical) and returns it. */
export async function writeManifest(
  dir: string,
  model: ModelDescription,
): Promise<{ manifest: Manifest; identity: string }> {
  const modelFile = await findModelFile(dir);
  if (modelFile === undefined) {
    throw new Error(`no ONNX model in ${dir} (looked for ${MODEL_FILES.join(", ")})`);
  }
  const files: Record<string, string> = {};
  for (const name of [CONFIG_FILE, TOKENIZER_FILE, modelFile]) {
    files[name] = await fileSha256(join(dir, name));
  }
  const manifest = decodeOrThrow(manifestDecoder, {
    format: MANIFEST_FORMAT,
    model: modelFile,
    tokenizer: TOKENIZER_FILE,
    files,
    ...model,
  });
  await writeFile(join(dir, MANIFEST_FILE), `${canonicalJson(manifest)}\n`);
  return { manifest, identity: manifestIdentity(manifest) };
}

/** Reads and decodes `manifest.json` (size-bounded); throws with the reason. */
export async function readManifest(dir: string): Promise<Manifest> {
  const text = await readFile(join(dir, MANIFEST_FILE), "utf8");
  if (Buffer.byteLength(text) > MANIFEST_MAX_BYTES) {
    throw new Error(`${MANIFEST_FILE} is larger than ${MANIFEST_MAX_BYTES} bytes`);
  }
  return decodeOrThrow(manifestDecoder, JSON.parse(text));
}
