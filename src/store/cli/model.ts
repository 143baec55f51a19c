/**
 * `skein-store model manifest DIR`: hashes a model directory's files, writes its
 * `manifest.json` and prints the identity to put in `embed_model_sha256`. The description
 * (dimensions, maximum tokens, special tokens, prefixes, pooling) comes from an existing
 * manifest, else from `config.json` and `tokenizer.json` as Hugging Face exports write
 * them; options override it. See docs/embeddings.md, "Models".
 */

import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import {
  CONFIG_FILE,
  type ModelDescription,
  readManifest,
  TOKENIZER_FILE,
  writeManifest,
} from "../embed/manifest.ts";
import { storeError } from "../errors.ts";
import { reportRefusals } from "./refusal.ts";

const options = {
  pooling: { type: "string" },
  "max-tokens": { type: "string" },
  "document-prefix": { type: "string" },
  "question-prefix": { type: "string" },
} as const;

export const modelCommand: Command = {
  name: "model",
  summary: "write a model directory's manifest and print its identity (model manifest DIR)",
  help: "manifest DIR [--pooling mean|cls] [--max-tokens N] [--document-prefix TEXT] [--question-prefix TEXT]\n",
  run: (args, io) =>
    reportRefusals("model", io, async () => {
      const { values, positionals } = parseOptions(args, options, { min: 2, max: 2 });
      if (positionals[0] !== "manifest") {
        throw new UsageError(`unknown model command ${JSON.stringify(positionals[0])}`);
      }
      const dir = resolve(positionals[1]!);
      const base = await describe(dir);
      const pooling = values.pooling ?? base.pooling;
      if (pooling !== "mean" && pooling !== "cls") {
        throw new UsageError("--pooling must be mean or cls");
      }
      const maxTokens =
        values["max-tokens"] === undefined ? base.max_tokens : Number(values["max-tokens"]);
      const description: ModelDescription = {
        ...base,
        pooling,
        max_tokens: maxTokens,
        prefix: {
          document: values["document-prefix"] ?? base.prefix.document,
          question: values["question-prefix"] ?? base.prefix.question,
        },
      };
      try {
        const { identity } = await writeManifest(dir, description);
        io.out(identity);
        return 0;
      } catch (error) {
        if (error instanceof SkeinError) throw error;
        throw storeError("embed_model_missing", (error as Error).message);
      }
    }),
};

/** The existing manifest's description, else one read from the export's own files. */
async function describe(dir: string): Promise<ModelDescription> {
  try {
    const { dims, max_tokens, special_tokens, prefix, pooling, normalize } =
      await readManifest(dir);
    return { dims, max_tokens, special_tokens, prefix, pooling, normalize };
  } catch {}
  const config = await readJson(join(dir, CONFIG_FILE));
  const tokenizer = await readJson(join(dir, TOKENIZER_FILE));
  const vocab = ((tokenizer.model as Record<string, unknown> | undefined)?.vocab ?? {}) as object;
  const bert = Object.hasOwn(vocab, "[CLS]");
  return {
    dims: Number(config.hidden_size),
    max_tokens: Number(config.max_position_embeddings),
    special_tokens: bert ? { start: "[CLS]", end: "[SEP]" } : { start: "<s>", end: "</s>" },
    prefix: { document: "", question: "" },
    pooling: "mean",
    normalize: true,
  };
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "not JSON";
    throw storeError("embed_model_missing", `${path}: ${reason}`);
  }
}
