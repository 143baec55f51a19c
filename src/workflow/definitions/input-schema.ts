/**
 * A definition's `input_schema`: the JSON Schema (2020-12) a run's input must satisfy. It is
 * checked when the definition is decoded (so a registration with a schema Ajv cannot compile
 * is `invalid_definition` naming `input_schema`), compiled once per definition version, and
 * enforced by every start (HTTP and MCP, `invalid_input`). The same schema is the input
 * schema of the definition's MCP tool, which is why it must describe an object: a tool's
 * arguments are one.
 *
 * Ajv is strict about the schema itself (an unknown keyword such as `requried` is refused
 * rather than silently ignored) and knows the standard formats. No `$ref` leaves the
 * schema: nothing is fetched, so a remote reference does not compile and is refused. Its
 * `pattern` and `patternProperties` regexes run on V8's linear-time engine, as expressions'
 * do: whoever registers a definition cannot make a start backtrack catastrophically, and a
 * pattern that engine cannot run (a backreference) is refused at registration.
 */

import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { type Decoder, expectObject, type Path, refuse } from "../../common/decode/index.ts";
import { canonicalJson } from "./canonical.ts";
import { linearRegExp } from "./expression-limits.ts";

/** The dialect a declared `$schema` must name (absent, this one is assumed). */
export const INPUT_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";

/** Longest input schema, as canonical JSON: a schema is a contract, not a data set. */
export const INPUT_SCHEMA_MAX_BYTES = 65_536;

/** Errors named in one `invalid_input` refusal (Ajv collects them all). */
const ERRORS_NAMED = 5;

/** A compiled input schema: the schema as plain JSON, and its check of an input. */
export interface InputSchema {
  /** Plain JSON (numbers as JS numbers), as tools/list shows it. */
  readonly schema: Readonly<Record<string, unknown>>;
  /** Undefined when `input` conforms; else the reasons, for the refusal's message. */
  check(input: unknown): string | undefined;
}

// One compiler for every definition: each compiled schema is removed from Ajv's cache at
// once (the definition keeps its validator), so registrations never grow Ajv's memory.
// V8's linear-time engine does not take the `u` flag, so patterns compile without it
// (`unicodeRegExp: false` below): `\\p{…}` classes and `\\u{…}` escapes are refused.
const patternEngine = Object.assign(
  (pattern: string, flags: string) => linearRegExp(new RegExp(pattern, flags)),
  // Ajv names the engine in standalone code, which this project never generates.
  { code: "linearRegExp" },
);
const ajv = new Ajv2020({
  code: { regExp: patternEngine },
  unicodeRegExp: false,
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  allErrors: true,
  validateFormats: true,
});
(addFormats as unknown as (instance: Ajv2020) => void)(ajv);

function reasons(errors: readonly ErrorObject[] | null | undefined): string {
  const list = (errors ?? []).slice(0, ERRORS_NAMED).map((e) => {
    const at = e.instancePath === "" ? "input" : `input${e.instancePath.replaceAll("/", ".")}`;
    return `${at} ${e.message ?? "is refused"}`;
  });
  const more = (errors?.length ?? 0) - list.length;
  return more > 0 ? `${list.join("; ")} (and ${more} more)` : list.join("; ");
}

function compile(schema: Record<string, unknown>, path: Path): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return refuse("rule", path, `is not a usable JSON Schema 2020-12: ${reason}`);
  } finally {
    ajv.removeSchema(schema);
  }
}

/** The decoder of `input_schema`, on a parsed (lossless) document value. */
export const inputSchema: Decoder<InputSchema> = {
  expected: "JSON Schema 2020-12 of an object",
  schema: {
    type: "object",
    description:
      'JSON Schema 2020-12 of the run input (type "object"); enforced at start and shown ' +
      "as the input schema of the definition's MCP tool",
  },
  run(value, path) {
    expectObject(value, path, "JSON Schema object");
    const canonical = canonicalJson(value);
    if (Buffer.byteLength(canonical) > INPUT_SCHEMA_MAX_BYTES) {
      refuse("shape", path, `is longer than ${INPUT_SCHEMA_MAX_BYTES} bytes as JSON`);
    }
    // Plain numbers for Ajv: the document's lossless ones are objects to it.
    const schema = JSON.parse(canonical) as Record<string, unknown>;
    if (schema.$schema !== undefined && schema.$schema !== INPUT_SCHEMA_DIALECT) {
      refuse("rule", path, `$schema must be ${INPUT_SCHEMA_DIALECT} (or absent)`);
    }
    if (schema.type !== "object") {
      refuse(
        "rule",
        path,
        'must declare type "object": a run input is an object (the arguments of its MCP tool)',
      );
    }
    const validate = compile(schema, path);
    return {
      schema,
      check(input) {
        return validate(input) ? undefined : reasons(validate.errors);
      },
    };
  },
};

/**
 * Why `inputJson` does not satisfy the `input_schema` of `definition`, worded for an
 * `invalid_input` refusal or run failure; undefined when it conforms (or none is declared).
 * Every way a run begins passes here: a start (HTTP, MCP, a forwarded cluster request) and a
 * `child` step, so no run ever holds an input its definition refuses.
 */
export function inputRefusal(
  definition: { readonly name: string; readonly inputSchema: InputSchema | undefined },
  inputJson: string,
): string | undefined {
  const refused = definition.inputSchema?.check(JSON.parse(inputJson));
  return refused === undefined
    ? undefined
    : `the input does not satisfy the input_schema of ${JSON.stringify(definition.name)}: ${refused}`;
}
