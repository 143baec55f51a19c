/**
 * Data flow in a workflow definition: JSONata expressions evaluated over the scope
 * `{input, steps, item}` (the run's input, the outputs of finished steps by id, and the
 * current item inside a `collect` body). An expression is compiled once, when the definition
 * is decoded, so a syntax error is a refusal at registration that names the field and the
 * position; evaluation errors at run time are typed SkeinErrors with code
 * `expression_failed`.
 */

import jsonata from "jsonata";
import type { Decoder } from "../../common/decode/index.ts";
import { refuse, string } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";

/** The values an expression sees. */
export interface Scope {
  readonly input: unknown;
  readonly steps: Readonly<Record<string, unknown>>;
  readonly item?: unknown;
}

export interface Expression {
  readonly source: string;
  evaluate(scope: Scope): Promise<unknown>;
}

export const EXPRESSION_CODE = "invalid_definition";

/** Compiles `source`; throws the JSONata error. */
export function compileExpression(source: string): Expression {
  const compiled = jsonata(source);
  const constant = jsonConstant(source);
  if (constant !== undefined) {
    // A JSON text means the same in JSONata; skip the evaluator for it (a common `input: "{}"`).
    return { source, evaluate: async () => JSON.parse(constant) };
  }
  return {
    source,
    async evaluate(scope) {
      try {
        const value = await compiled.evaluate({
          input: scope.input,
          steps: scope.steps,
          item: scope.item,
        });
        // JSONata yields `undefined` for "no match"; JSON has no undefined, so it is null.
        return value === undefined ? null : normalise(value);
      } catch (error) {
        const e = error as { message?: string; position?: number };
        throw new SkeinError(
          "expression_failed",
          `expression ${JSON.stringify(source)} failed: ${e.message ?? String(error)}${e.position === undefined ? "" : ` (at position ${e.position})`}`,
        );
      }
    },
  };
}

/** The text itself when `source` is one JSON value, else undefined. */
function jsonConstant(source: string): string | undefined {
  try {
    JSON.parse(source);
    return source;
  } catch {
    return undefined;
  }
}

/** JSONata results can carry sequence markers and non-JSON values; keep plain JSON only. */
function normalise(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value) ?? "null");
}

/** Decodes a string field holding a JSONata expression; a syntax error is a `shape` refusal. */
export function expression(): Decoder<Expression> {
  const text = string({ minBytes: 1, maxBytes: 65_536 });
  return {
    expected: "JSONata expression string",
    run(value, path) {
      const source = text.run(value, path);
      try {
        return compileExpression(source);
      } catch (error) {
        const e = error as { message?: string; position?: number };
        return refuse(
          "shape",
          path,
          `bad JSONata expression: ${e.message ?? String(error)}${e.position === undefined ? "" : ` (at position ${e.position})`}`,
          EXPRESSION_CODE,
        );
      }
    },
  };
}
