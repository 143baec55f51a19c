/**
 * A small deterministic BERT-shaped sentence-embedding model for tests and benchmarks, made
 * without a download: a WordPiece `tokenizer.json` (BERT normaliser and pre-tokeniser, a
 * vocabulary of letters, word pieces and a few words), an ONNX graph with the inputs and
 * output of a BERT export (`input_ids`, `attention_mask`, `token_type_ids` →
 * `last_hidden_state`: a token embedding lookup plus a token-type embedding, zeroed where
 * the mask is 0; with `layers`, that many encoder layers between the two, each a
 * single-head self-attention and a feed-forward block with residuals and layer norms, so
 * that the graph costs what a small BERT costs to run), `config.json` and `manifest.json` (written by the store's own manifest
 * code, so the identity is the one `skein-store model manifest` prints). The ONNX protobuf
 * is encoded here with protobufjs from the few message types of onnx.proto it needs.
 *
 * Run as a script to write one: `node test/store/embed/test-model.ts DIR [--dims N] [--layers N]`.
 */

import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import protobuf from "protobufjs";
import { writeManifest } from "../../../src/store/embed/manifest.ts";

export interface TestModelOptions {
  /** Vector dimensions (default 16). */
  readonly dims?: number;
  /** The model's maximum tokens, written to config.json and the manifest (default 128). */
  readonly maxTokens?: number;
  /** Seed of the weights (default 1): another seed is another model. */
  readonly seed?: number;
  /** Prefix texts the manifest names for documents and questions (default none). */
  readonly prefix?: { readonly document: string; readonly question: string };
  /**
   * Encoder layers (default 0: the embedding lookup alone, a graph so cheap that a walk
   * over it measures the store). Benchmarks use one or more to embed at a real model's
   * cost; the weights are random, so the vectors mean nothing beyond being deterministic.
   */
  readonly layers?: number;
}

export interface TestModel {
  readonly dir: string;
  readonly identity: string;
  readonly dims: number;
  readonly maxTokens: number;
}

const SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const WORDS =
  "the a an of and to in is it that on for with as was by at be this are from or have not but what all were when we there can more one about which their will up out time if so into some them other than then its only also two these first new any my now over such our even most made after many well way down should because each those people how too year good very make world still own see men work long here get both between life being under never day same another know while last might us great old year off come since against go came right used take three words word text document question store branch version model vector search".split(
    " ",
  );

function vocabulary(): string[] {
  const letters = "abcdefghijklmnopqrstuvwxyz0123456789".split("");
  const unique = [...new Set(WORDS)];
  return [...SPECIAL, ...letters, ...letters.map((l) => `##${l}`), ...unique];
}

function tokenizerJson(vocab: readonly string[]): unknown {
  const ids = Object.fromEntries(vocab.map((token, id) => [token, id]));
  const special = (content: string) => ({
    id: ids[content],
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const template = (id: string) => ({ SpecialToken: { id, type_id: 0 } });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map(special),
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [template("[CLS]"), { Sequence: { id: "A", type_id: 0 } }, template("[SEP]")],
      pair: [
        template("[CLS]"),
        { Sequence: { id: "A", type_id: 0 } },
        template("[SEP]"),
        { Sequence: { id: "B", type_id: 1 } },
        { SpecialToken: { id: "[SEP]", type_id: 1 } },
      ],
      special_tokens: {
        "[CLS]": { id: "[CLS]", ids: [ids["[CLS]"]], tokens: ["[CLS]"] },
        "[SEP]": { id: "[SEP]", ids: [ids["[SEP]"]], tokens: ["[SEP]"] },
      },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab: ids,
    },
  };
}

/** mulberry32: a tiny seeded generator of numbers in [0, 1), the same for the same seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Weights in [-0.5, 0.5), the same for the same seed. */
function generator(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() - 0.5;
}

function weights(rows: number, dims: number, next: () => number): Buffer {
  const values = new Float32Array(rows * dims);
  for (let i = 0; i < values.length; i++) values[i] = next();
  return Buffer.from(values.buffer);
}

// The subset of onnx.proto (field numbers as there) this graph needs.
const onnxSchema = protobuf.Root.fromJSON({
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            ir_version: { type: "int64", id: 1 },
            producer_name: { type: "string", id: 2 },
            graph: { type: "GraphProto", id: 7 },
            opset_import: { rule: "repeated", type: "OperatorSetIdProto", id: 8 },
          },
        },
        OperatorSetIdProto: {
          fields: { domain: { type: "string", id: 1 }, version: { type: "int64", id: 2 } },
        },
        GraphProto: {
          fields: {
            node: { rule: "repeated", type: "NodeProto", id: 1 },
            name: { type: "string", id: 2 },
            initializer: { rule: "repeated", type: "TensorProto", id: 5 },
            input: { rule: "repeated", type: "ValueInfoProto", id: 11 },
            output: { rule: "repeated", type: "ValueInfoProto", id: 12 },
          },
        },
        NodeProto: {
          fields: {
            input: { rule: "repeated", type: "string", id: 1 },
            output: { rule: "repeated", type: "string", id: 2 },
            name: { type: "string", id: 3 },
            op_type: { type: "string", id: 4 },
            attribute: { rule: "repeated", type: "AttributeProto", id: 5 },
          },
        },
        AttributeProto: {
          fields: {
            name: { type: "string", id: 1 },
            f: { type: "float", id: 2 },
            i: { type: "int64", id: 3 },
            ints: { rule: "repeated", type: "int64", id: 8 },
            type: { type: "int32", id: 20 },
          },
        },
        TensorProto: {
          fields: {
            dims: { rule: "repeated", type: "int64", id: 1 },
            data_type: { type: "int32", id: 2 },
            name: { type: "string", id: 8 },
            raw_data: { type: "bytes", id: 9 },
          },
        },
        ValueInfoProto: {
          fields: { name: { type: "string", id: 1 }, type: { type: "TypeProto", id: 2 } },
        },
        TypeProto: { fields: { tensor_type: { type: "TensorType", id: 1 } } },
        TensorType: {
          fields: {
            elem_type: { type: "int32", id: 1 },
            shape: { type: "TensorShapeProto", id: 2 },
          },
        },
        TensorShapeProto: { fields: { dim: { rule: "repeated", type: "Dimension", id: 1 } } },
        Dimension: {
          fields: { dim_value: { type: "int64", id: 1 }, dim_param: { type: "string", id: 2 } },
        },
      },
    },
  },
});

const FLOAT = 1;
const INT64 = 7;
const ATTRIBUTE_FLOAT = 1;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_INTS = 7;

function valueInfo(name: string, elemType: number, dims: (string | number)[]) {
  return {
    name,
    type: {
      tensor_type: {
        elem_type: elemType,
        shape: {
          dim: dims.map((d) => (typeof d === "string" ? { dim_param: d } : { dim_value: d })),
        },
      },
    },
  };
}

function node(op: string, inputs: string[], output: string, attribute: object[] = []) {
  return { op_type: op, input: inputs, output: [output], name: output, attribute };
}

interface Tensor {
  readonly name: string;
  readonly data_type: number;
  readonly dims: number[];
  readonly raw_data: Buffer;
}

function matrix(name: string, rows: number, columns: number, next: () => number): Tensor {
  // Scaled by 1/sqrt(rows) so that activations keep their size from layer to layer.
  const scale = 1 / Math.sqrt(rows);
  return {
    name,
    data_type: FLOAT,
    dims: [rows, columns],
    raw_data: weights(rows, columns, () => next() * scale),
  };
}

function constant(name: string, value: number, length = 1): Tensor {
  return {
    name,
    data_type: FLOAT,
    dims: length === 1 ? [] : [length],
    raw_data: Buffer.from(new Float32Array(length).fill(value).buffer),
  };
}

/**
 * One encoder layer from `input` ([batch, sequence, dims]) to `${prefix}out`: single-head
 * attention masked by `mask_bias` ([batch, 1, sequence]), then a feed-forward block of
 * width 4 × dims, each with a residual and a layer norm, as in BERT.
 */
function encoderLayer(prefix: string, input: string, dims: number, next: () => number) {
  const p = (name: string) => `${prefix}${name}`;
  const initializer = [
    matrix(p("wq"), dims, dims, next),
    matrix(p("wk"), dims, dims, next),
    matrix(p("wv"), dims, dims, next),
    matrix(p("wo"), dims, dims, next),
    matrix(p("w1"), dims, 4 * dims, next),
    matrix(p("w2"), 4 * dims, dims, next),
    constant(p("scale"), 1 / Math.sqrt(dims)),
    constant(p("gamma"), 1, dims),
    constant(p("beta"), 0, dims),
  ];
  const norm = (inputs: string[], output: string) =>
    node("LayerNormalization", [...inputs, p("gamma"), p("beta")], output, [
      { name: "axis", i: -1, type: ATTRIBUTE_INT },
      { name: "epsilon", f: 1e-12, type: ATTRIBUTE_FLOAT },
    ]);
  const nodes = [
    node("MatMul", [input, p("wq")], p("q")),
    node("MatMul", [input, p("wk")], p("k")),
    node("MatMul", [input, p("wv")], p("v")),
    node("Transpose", [p("k")], p("kt"), [{ name: "perm", ints: [0, 2, 1], type: ATTRIBUTE_INTS }]),
    node("MatMul", [p("q"), p("kt")], p("scores")),
    node("Mul", [p("scores"), p("scale")], p("scaled")),
    node("Add", [p("scaled"), "mask_bias"], p("masked")),
    node("Softmax", [p("masked")], p("attention"), [{ name: "axis", i: -1, type: ATTRIBUTE_INT }]),
    node("MatMul", [p("attention"), p("v")], p("context")),
    node("MatMul", [p("context"), p("wo")], p("attended")),
    node("Add", [input, p("attended")], p("residual1")),
    norm([p("residual1")], p("normed1")),
    node("MatMul", [p("normed1"), p("w1")], p("wide")),
    node("Relu", [p("wide")], p("activated")),
    node("MatMul", [p("activated"), p("w2")], p("narrow")),
    node("Add", [p("normed1"), p("narrow")], p("residual2")),
    norm([p("residual2")], p("out")),
  ];
  return { initializer, nodes, output: p("out") };
}

/** The encoder's layers over `summed`, and the mask bias their attention adds. */
function encoder(layers: number, dims: number, next: () => number) {
  const initializer: Tensor[] = [
    constant("one", 1),
    constant("masked_out", -10_000),
    {
      name: "middle_axis",
      data_type: INT64,
      dims: [1],
      raw_data: Buffer.from(new BigInt64Array([1n]).buffer),
    },
  ];
  const nodes = [
    // 0 where a token is attended, -10,000 where it is padding: added to the scores.
    node("Sub", ["one", "mask_float"], "mask_inverse"),
    node("Mul", ["mask_inverse", "masked_out"], "mask_row"),
    node("Unsqueeze", ["mask_row", "middle_axis"], "mask_bias"),
  ];
  let hidden = "summed";
  for (let layer = 0; layer < layers; layer++) {
    const built = encoderLayer(`layer${layer}_`, hidden, dims, next);
    initializer.push(...built.initializer);
    nodes.push(...built.nodes);
    hidden = built.output;
  }
  return { initializer, nodes, output: hidden };
}

function onnxModel(vocab: number, dims: number, seed: number, layers: number): Uint8Array {
  const next = generator(seed);
  const layered = layers > 0 ? encoder(layers, dims, next) : undefined;
  const graph = {
    name: "skein_test_model",
    initializer: [
      {
        name: "word_embeddings",
        data_type: FLOAT,
        dims: [vocab, dims],
        raw_data: weights(vocab, dims, next),
      },
      {
        name: "type_embeddings",
        data_type: FLOAT,
        dims: [2, dims],
        raw_data: weights(2, dims, next),
      },
      {
        name: "last_axis",
        data_type: INT64,
        dims: [1],
        raw_data: Buffer.from(new BigInt64Array([-1n]).buffer),
      },
      ...(layered?.initializer ?? []),
    ],
    node: [
      node("Gather", ["word_embeddings", "input_ids"], "words", [
        { name: "axis", i: 0, type: ATTRIBUTE_INT },
      ]),
      node("Gather", ["type_embeddings", "token_type_ids"], "types", [
        { name: "axis", i: 0, type: ATTRIBUTE_INT },
      ]),
      node("Add", ["words", "types"], "summed"),
      node("Cast", ["attention_mask"], "mask_float", [
        { name: "to", i: FLOAT, type: ATTRIBUTE_INT },
      ]),
      node("Unsqueeze", ["mask_float", "last_axis"], "mask_column"),
      ...(layered?.nodes ?? []),
      node("Mul", [layered?.output ?? "summed", "mask_column"], "last_hidden_state"),
    ],
    input: [
      valueInfo("input_ids", INT64, ["batch", "sequence"]),
      valueInfo("attention_mask", INT64, ["batch", "sequence"]),
      valueInfo("token_type_ids", INT64, ["batch", "sequence"]),
    ],
    output: [valueInfo("last_hidden_state", FLOAT, ["batch", "sequence", dims])],
  };
  const Model = onnxSchema.lookupType("onnx.ModelProto");
  const message = Model.fromObject({
    ir_version: 8,
    producer_name: "skein-test-model",
    graph,
    // LayerNormalization, which the layers use, is an operator from opset 17 on.
    opset_import: [{ domain: "", version: 17 }],
  });
  return Model.encode(message).finish();
}

/** Writes the model into `dir` (created) and returns its identity. */
export async function writeTestModel(
  dir: string,
  options: TestModelOptions = {},
): Promise<TestModel> {
  const dims = options.dims ?? 16;
  const maxTokens = options.maxTokens ?? 128;
  const vocab = vocabulary();
  await mkdir(join(dir, "onnx"), { recursive: true });
  await writeFile(join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson(vocab)));
  await writeFile(
    join(dir, "config.json"),
    JSON.stringify({
      model_type: "bert",
      hidden_size: dims,
      max_position_embeddings: maxTokens,
      vocab_size: vocab.length,
    }),
  );
  await writeFile(
    join(dir, "onnx", "model.onnx"),
    onnxModel(vocab.length, dims, options.seed ?? 1, options.layers ?? 0),
  );
  const manifest = await writeManifest(dir, {
    dims,
    max_tokens: maxTokens,
    special_tokens: { start: "[CLS]", end: "[SEP]" },
    prefix: options.prefix ?? { document: "", question: "" },
    pooling: "mean",
    normalize: true,
  });
  return { dir, identity: manifest.identity, dims, maxTokens };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { dims: { type: "string" }, layers: { type: "string" } },
  });
  const dir = positionals[0];
  if (dir === undefined) {
    process.stderr.write(
      "usage: node test/store/embed/test-model.ts DIR [--dims N] [--layers N]\n",
    );
    process.exit(2);
  }
  const model = await writeTestModel(dir, {
    ...(values.dims === undefined ? {} : { dims: Number(values.dims) }),
    ...(values.layers === undefined ? {} : { layers: Number(values.layers) }),
  });
  process.stdout.write(`${model.identity}\n`);
}
