/**
 * Data flow in a workflow definition: JSONata expressions evaluated over the scope
 * `{input, steps, item}` (the run's input, the outputs of finished steps by id, and the
 * current item inside a `collect` body). An expression is compiled once, when the definition
 * is decoded, so a syntax error is a refusal at registration that names the field and the
 * position; evaluation errors at run time are typed SkeinErrors with code
 * `expression_failed`.
 *
 * Every evaluation is bounded (expression-limits.ts): a JSON constant needs no evaluation, an
 * expression whose work is bounded by its size and the scope's (expression-inline.ts: paths,
 * constructors, arithmetic, linear natives) runs here under JSONata's guardrails, and
 * everything else runs on the evaluator thread (expression-evaluator.ts),
 * whose deadline and heap limit hold whatever the expression does. Registration refuses
 * what is refusable statically: source size, syntax-tree nesting, and regexes that cannot
 * run in linear time.
 */

import jsonata from "jsonata";
import type { Decoder } from "../../common/decode/index.ts";
import { refuse, string } from "../../common/decode/index.ts";
import type { SkeinError } from "../../common/errors.ts";
import { runFailure } from "../errors.ts";
import { evaluator } from "./expression-evaluator.ts";
import { runsInline } from "./expression-inline.ts";
import {
  EXPRESSION_NESTING_LIMIT,
  EXPRESSION_RESULT_LIMIT,
  EXPRESSION_SOURCE_LIMIT,
  GUARDRAILS,
  guardrailMessage,
  linearRegExp,
  RESULT_TOO_LARGE,
} from "./expression-limits.ts";

/** The values an expression sees. */
export interface Scope {
  readonly input: unknown;
  readonly steps: Readonly<Record<string, unknown>>;
  readonly item?: unknown;
}

export interface Expression {
  readonly source: string;
  evaluate(scope: Scope): Promise<unknown>;
  /**
   * For a JSON constant (`input: "{}"`), its value as `JSON.stringify` writes it: the engine
   * schedules it without a scope, an evaluation or a turn of the microtask queue.
   */
  readonly constantJson?: string;
}

export const EXPRESSION_CODE = "invalid_definition";

/** Compiles `source`; throws the JSONata error, or a plain Error for a statically refused
 * construct. */
export function compileExpression(source: string): Expression {
  const constant = jsonConstant(source);
  if (constant !== undefined) {
    // A JSON text means the same in JSONata; skip the evaluator for it (a common `input: "{}"`).
    return {
      source,
      evaluate: async () => JSON.parse(constant),
      constantJson: JSON.stringify(JSON.parse(constant)),
    };
  }
  const compiled = jsonata(source, GUARDRAILS);
  const ast = compiled.ast();
  checkStatically(ast);
  if (runsInline(ast)) return inline(source, compiled);
  return {
    source,
    async evaluate(scope) {
      const json = await evaluator
        .evaluate(source, { input: scope.input, steps: scope.steps, item: scope.item })
        .catch((error: SkeinError) => {
          throw failed(source, error.message);
        });
      return JSON.parse(json);
    },
  };
}

/** An expression whose work is bounded by its size and the scope's (expression-inline.ts). */
function inline(source: string, compiled: jsonata.Expression): Expression {
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
        const json = JSON.stringify(value) ?? "null";
        if (json.length > EXPRESSION_RESULT_LIMIT) throw { message: RESULT_TOO_LARGE };
        return JSON.parse(json);
      } catch (error) {
        const e = error as { code?: unknown; message?: string; position?: number };
        const message = guardrailMessage(e.code) ?? e.message ?? String(error);
        throw failed(
          source,
          `${message}${e.position === undefined ? "" : ` (at position ${e.position})`}`,
        );
      }
    },
  };
}

function failed(source: string, message: string): SkeinError {
  return runFailure("expression_failed", `expression ${JSON.stringify(source)} failed: ${message}`);
}

/** A syntax-tree node as the JSONata parser builds it. */
interface Node {
  readonly type: string;
  readonly value?: unknown;
  readonly position?: number;
  readonly steps?: readonly Node[];
}

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as Node).type === "string";

/** Throws when the tree nests deeper than the limit or holds a regex without a linear-time
 * match. Walks every object the parser attached, so new node shapes are covered too. */
function checkStatically(ast: Node): void {
  const seen = new Set<object>();
  const walk = (value: unknown, depth: number): void => {
    if (typeof value !== "object" || value === null || seen.has(value)) return;
    seen.add(value);
    if (value instanceof RegExp) return;
    const node = isNode(value);
    const level = node ? depth + 1 : depth;
    if (level > EXPRESSION_NESTING_LIMIT) {
      throw new Error(`nests deeper than the limit of ${EXPRESSION_NESTING_LIMIT} levels`);
    }
    if (node && value.type === "regex" && value.value instanceof RegExp) checkRegex(value);
    for (const child of Object.values(value)) walk(child, level);
  };
  walk(ast, 0);
}

function checkRegex(node: Node): void {
  const regex = node.value as RegExp;
  try {
    linearRegExp(regex);
  } catch {
    throw new Error(
      `regex /${regex.source}/ cannot run in linear time (no backreferences or large nested repetitions)${node.position === undefined ? "" : ` (at position ${node.position})`}`,
    );
  }
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

/** Decodes a string field holding a JSONata expression; a syntax error is a `shape` refusal. */
export function expression(): Decoder<Expression> {
  const text = string({ minBytes: 1, maxBytes: EXPRESSION_SOURCE_LIMIT });
  return {
    expected: "JSONata expression string",
    schema: { ...text.schema, description: "JSONata expression over {input, steps, item}" },
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
