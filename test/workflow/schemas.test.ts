// The JSON Schema files under schemas/ (editor completion for workflow definitions and
// worker documents): they are exactly what the decoders generate, they are valid JSON
// Schema 2020-12, every example document the decoders accept validates, and documents the
// decoders refuse for shape reasons (unknown field, two step shapes, a missing id) do not.

import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse as parseYaml } from "yaml";
import { type Decoder, decode } from "../../src/common/decode/index.ts";
import { WORKER_DOCUMENT_DECODERS, WORKER_KINDS } from "../../src/worker/document.ts";
import { decodeDefinition } from "../../src/workflow/definitions/index.ts";
import { schemaFiles } from "../../src/workflow/schemas.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false });
const validators = new Map(
  [...schemaFiles()].map(([name, schema]) => [name, ajv.compile(schema)] as const),
);
const definition = validators.get("workflow-definition.schema.json")!;

async function documents(dir: string): Promise<[string, unknown][]> {
  const out: [string, unknown][] = [];
  for (const entry of await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || ![".yaml", ".yml", ".json"].includes(extname(entry.name))) continue;
    const path = join(entry.parentPath, entry.name);
    out.push([path.slice(ROOT.length), parseYaml(await readFile(path, "utf8"))]);
  }
  return out;
}

function accepts(decodes: () => unknown): boolean {
  try {
    decodes();
    return true;
  } catch {
    return false;
  }
}

describe("schemas/ for editors", () => {
  test("each file is what the decoders generate (run `npm run schemas` after a change)", async () => {
    for (const [name, schema] of schemaFiles()) {
      const text = await readFile(join(ROOT, "schemas", name), "utf8");
      assert.deepEqual(JSON.parse(text), schema, `schemas/${name} is stale`);
    }
  });

  test("every example definition and worker document the decoders accept validates", async () => {
    let definitions = 0;
    let workers = 0;
    for (const [path, doc] of await documents("examples")) {
      if (accepts(() => decodeDefinition(doc))) {
        definitions++;
        assert.ok(definition(doc), `${path}: ${ajv.errorsText(definition.errors)}`);
      }
      for (const kind of WORKER_KINDS) {
        if (!decode(WORKER_DOCUMENT_DECODERS[kind] as Decoder<unknown>, doc).ok) continue;
        workers++;
        const validate = validators.get(`worker-document.${kind}.schema.json`)!;
        assert.ok(validate(doc), `${path} (${kind}): ${ajv.errorsText(validate.errors)}`);
      }
    }
    assert.ok(
      definitions >= 1 && workers >= 1,
      "examples/ holds a definition and a worker document",
    );
  });

  const ok = (steps: unknown[], extra: object = {}) => ({
    name: "w",
    task_queue: "q",
    steps,
    ...extra,
  });
  const call = { id: "a", call: { action: "act", input: "input.x", retry: { max_attempts: 2 } } };
  const valid: [string, unknown][] = [
    ["one call", ok([call])],
    [
      "every step shape, nested",
      ok(
        [
          call,
          {
            id: "p",
            parallel: {
              branches: [
                { id: "b1", call: { action: "x" } },
                { id: "b2", sleep: { duration_ms: 5 } },
              ],
            },
          },
          {
            id: "c",
            collect: {
              items: "input.xs",
              step: { id: "one", call: { action: "x", input: "item" } },
              max_items: 10,
            },
          },
          { id: "ch", child: { workflow: "other", input: "{}" } },
          { id: "w", wait: { signal: "go", timeout_ms: 1000, on_timeout: "continue" } },
        ],
        { deadline_ms: 60000, output: "steps.a" },
      ),
    ],
  ];
  const invalid: [string, unknown][] = [
    ["an unknown top-level field", ok([call], { bogus: 1 })],
    ["a step with two shapes", ok([{ id: "a", call: { action: "x" }, sleep: { duration_ms: 1 } }])],
    ["a step without an id", ok([{ call: { action: "x" } }])],
    [
      "an unknown field in a nested call",
      ok([{ id: "p", parallel: { branches: [{ id: "b", call: { action: "x", bogus: 1 } }] } }]),
    ],
    ["no steps", ok([])],
    ["a negative duration", ok([{ id: "s", sleep: { duration_ms: -1 } }])],
    [
      "on_timeout outside its enumeration",
      ok([{ id: "w", wait: { signal: "s", on_timeout: "later" } }]),
    ],
  ];
  for (const [label, doc] of valid) {
    test(`definition schema accepts what the decoder accepts: ${label}`, () => {
      assert.ok(
        accepts(() => decodeDefinition(doc)),
        "the decoder accepts it",
      );
      assert.ok(definition(doc), ajv.errorsText(definition.errors));
    });
  }
  for (const [label, doc] of invalid) {
    test(`definition schema refuses what the decoder refuses by shape: ${label}`, () => {
      assert.ok(!accepts(() => decodeDefinition(doc)), "the decoder refuses it");
      assert.equal(definition(doc), false);
    });
  }

  test("worker document schemas: actions by kind, unknown fields refused", () => {
    const module = validators.get("worker-document.module.schema.json")!;
    const doc = {
      name: "w",
      task_queue: "q",
      actions: { inc: { module: "./a.ts", export: "inc" } },
    };
    assert.ok(decode(WORKER_DOCUMENT_DECODERS.module, doc).ok);
    assert.ok(module(doc), ajv.errorsText(module.errors));
    const bad = { ...doc, actions: { inc: { module: "./a.ts", export: "inc", bogus: true } } };
    assert.ok(!decode(WORKER_DOCUMENT_DECODERS.module, bad).ok);
    assert.equal(module(bad), false);
    assert.equal(module({ ...doc, actions: {} }), false, "at least one action");
  });
});
