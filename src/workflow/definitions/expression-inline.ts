/**
 * Which expressions may run inline, on the server's own thread, instead of on the evaluator
 * thread: those whose work is bounded by their size and the scope's, so JSONata's guardrails
 * (time, depth, sequence) between steps are enough. The evaluator thread's round trip costs
 * more than evaluating a typical step input (`{ 'id': input.id, 'n': steps.a.n + 1 }`), so
 * the common shapes stay here.
 *
 * An inline expression has at most INLINE_NODE_LIMIT syntax nodes, all of them literals,
 * paths of plain names (with filters), object and array constructors, arithmetic,
 * comparison, concatenation, conditions, blocks, and calls of the native functions in
 * LINEAR_FUNCTIONS. Without functions it defines, variables, ranges, regexes or mapping
 * steps other than names, every value it builds is made of parts of the scope, at most
 * INLINE_NODE_LIMIT times over, and every native call is linear in its arguments: no loop,
 * no recursion, no amplification. Any node shape not listed here (a future parser's too)
 * sends the expression to the evaluator thread.
 */

/** Syntax nodes of an inline expression: every value it builds is at most this many times
 * the scope's size, and typical step inputs have a few dozen. */
export const INLINE_NODE_LIMIT = 100;

/** Natives whose time is linear in their arguments and whose result is no larger than them
 * (plus a constant). `$pad`, `$join` (a separator repeated), `$replace`, regexes, picture
 * formatting and higher-order functions are not here. */
const LINEAR_FUNCTIONS = new Set([
  "string",
  "length",
  "substring",
  "substringBefore",
  "substringAfter",
  "uppercase",
  "lowercase",
  "trim",
  "contains",
  "split",
  "number",
  "abs",
  "floor",
  "ceil",
  "round",
  "sum",
  "max",
  "min",
  "average",
  "count",
  "boolean",
  "not",
  "exists",
  "keys",
  "lookup",
  "merge",
  "reverse",
  "append",
  "type",
  "millis",
  "now",
  "base64encode",
  "base64decode",
  "encodeUrlComponent",
  "encodeUrl",
  "decodeUrlComponent",
  "decodeUrl",
]);

const BINARY = new Set([
  "+",
  "-",
  "*",
  "/",
  "%",
  "=",
  "!=",
  "<",
  "<=",
  ">",
  ">=",
  "&",
  "and",
  "or",
  "in",
]);

/** A syntax-tree node as the JSONata parser builds it. */
type Node = { readonly type: string; readonly [key: string]: unknown };

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as Node).type === "string";

/** True when `ast` may run inline (see the module comment). */
export function runsInline(ast: unknown): boolean {
  const budget = { nodes: INLINE_NODE_LIMIT };
  return bounded(ast, budget);
}

function bounded(value: unknown, budget: { nodes: number }): boolean {
  if (!isNode(value) || --budget.nodes < 0) return false;
  const all = (nodes: unknown) => Array.isArray(nodes) && nodes.every((n) => bounded(n, budget));
  switch (value.type) {
    case "string":
    case "number":
    case "value":
      return only(value, "value");
    case "path":
      return (
        only(value, "steps", "keepSingletonArray") &&
        Array.isArray(value.steps) &&
        value.steps.every((step) => plainStep(step, budget))
      );
    case "unary":
      if (value.value === "-")
        return only(value, "value", "expression") && bounded(value.expression, budget);
      if (value.value === "[")
        return only(value, "value", "expressions", "consarray") && all(value.expressions);
      if (value.value === "{") {
        return only(value, "value", "lhs") && Array.isArray(value.lhs) && value.lhs.every(all);
      }
      return false;
    case "binary":
      return (
        only(value, "value", "lhs", "rhs") &&
        BINARY.has(value.value as string) &&
        bounded(value.lhs, budget) &&
        bounded(value.rhs, budget)
      );
    case "condition":
      return (
        only(value, "condition", "then", "else") &&
        bounded(value.condition, budget) &&
        bounded(value.then, budget) &&
        (value.else === undefined || bounded(value.else, budget))
      );
    case "block":
      return only(value, "expressions") && all(value.expressions);
    case "function": {
      const procedure = value.procedure;
      return (
        only(value, "value", "arguments", "procedure") &&
        isNode(procedure) &&
        procedure.type === "variable" &&
        only(procedure, "value") &&
        LINEAR_FUNCTIONS.has(procedure.value as string) &&
        all(value.arguments)
      );
    }
    default:
      return false;
  }
}

/** A path step: a plain name, optionally kept as an array, with filters that are bounded. */
function plainStep(step: unknown, budget: { nodes: number }): boolean {
  if (!isNode(step) || step.type !== "name" || !only(step, "value", "stages", "keepArray"))
    return false;
  const stages = step.stages ?? [];
  return (
    Array.isArray(stages) &&
    stages.every(
      (stage) =>
        isNode(stage) &&
        stage.type === "filter" &&
        only(stage, "expr") &&
        bounded(stage.expr, budget),
    )
  );
}

/** The node has no keys but `type`, `position` and `keys` (the parser leaves some unset keys
 * present with `undefined`, such as a call's `name`). */
function only(node: Node, ...keys: string[]): boolean {
  return Object.entries(node).every(
    ([k, v]) => v === undefined || k === "type" || k === "position" || keys.includes(k),
  );
}
