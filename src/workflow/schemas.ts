/**
 * The JSON Schema files shipped under `schemas/` for editor completion: the workflow
 * definition and each kind's worker document, made from the decoders the server and the
 * workers use (never written by hand, so they cannot drift: a test compares the files with
 * this output). `npm run schemas` rewrites (and formats) them after a decoder changes.
 */

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { JsonSchema } from "../common/decode/index.ts";
import { WORKER_KINDS, workerDocumentSchema } from "../worker/document.ts";
import { definitionSchema } from "./definitions/decode.ts";

/** File name under `schemas/` → schema. */
export function schemaFiles(): ReadonlyMap<string, JsonSchema> {
  const files = new Map<string, JsonSchema>([
    ["workflow-definition.schema.json", definitionSchema()],
  ]);
  for (const kind of WORKER_KINDS) {
    files.set(`worker-document.${kind}.schema.json`, workerDocumentSchema(kind));
  }
  return files;
}

if (import.meta.main) {
  const dir = join(import.meta.dirname, "..", "..", "schemas");
  for (const [name, schema] of schemaFiles()) {
    await writeFile(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
    console.log(`wrote schemas/${name}`);
  }
}
