/**
 * The query worker's fast path for the commonest queries: a function whose body is one
 * expression over its two parameters, `(r, args) => r.value.id % 100 === 0 ? r.value :
 * undefined` or `(r) => ({ id: r.value.id, title: r.value.title })`. Such code is parsed
 * here into a tree of closures over plain JSON data: member access, literals, operators,
 * conditionals, object and array literals. No call, no assignment, no name but the two
 * parameters and `undefined`, no loop: it can reach nothing but the record and the args,
 * and its work per record is bounded by its size (MAX_NODES).
 *
 * Its results must be exactly what QuickJS would give, so it takes only the cases where the
 * two engines cannot differ and gives up (`Unsupported`) on everything else: an operator on
 * an object, a member that is not an own data property of a JSON object, array or string
 * (an inherited one such as `constructor` or `map`), access on null or undefined (a
 * TypeError in QuickJS). Giving up is never an answer: the caller runs the batch in the
 * sandbox instead, which gives the exact result or refusal. Code outside the grammar is
 * not compiled here at all (`compileExpression` returns undefined).
 */

import { RESERVED, type Token, tokenize } from "./expression-tokens.ts";

/** Thrown when a record needs what this evaluator does not do exactly. */
export class Unsupported extends Error {}
const UNSUPPORTED = new Unsupported("outside the fast path");

export type Evaluate = (record: unknown, args: unknown) => unknown;

/** Largest expression taken (nodes); larger code runs in the sandbox. */
export const MAX_NODES = 256;
/** Deepest nesting taken (the parser recurses). */
const MAX_DEPTH = 64;

class Parser {
  readonly #tokens: Token[];
  readonly #params: readonly string[];
  #at = 0;
  #nodes = 0;
  #depth = 0;
  /** Uses of the parameters: how many times an output can hold the record or the args. */
  refs = 0;

  constructor(tokens: Token[], params: readonly string[]) {
    this.#tokens = tokens;
    this.#params = params;
  }

  isParam(name: string): boolean {
    return this.#params.includes(name);
  }

  get nodes(): number {
    return this.#nodes;
  }

  get done(): boolean {
    return this.#at === this.#tokens.length;
  }

  peek(text: string): boolean {
    const token = this.#tokens[this.#at];
    return token !== undefined && token.kind === "punct" && token.text === text;
  }

  eat(text: string): boolean {
    if (!this.peek(text)) return false;
    this.#at++;
    return true;
  }

  expect(text: string): void {
    if (!this.eat(text)) throw UNSUPPORTED;
  }

  #count(): void {
    if (++this.#nodes > MAX_NODES) throw UNSUPPORTED;
  }

  expression(): Evaluate {
    if (++this.#depth > MAX_DEPTH) throw UNSUPPORTED;
    try {
      return this.#conditional();
    } finally {
      this.#depth--;
    }
  }

  #conditional(): Evaluate {
    const test = this.#binary(0);
    if (!this.eat("?")) return test;
    const yes = this.expression();
    this.expect(":");
    const no = this.expression();
    this.#count();
    return (r, a) => (test(r, a) ? yes(r, a) : no(r, a));
  }

  #binary(level: number): Evaluate {
    if (level === LEVELS.length) return this.#unary();
    let left = this.#binary(level + 1);
    for (;;) {
      const op = LEVELS[level]!.find((o) => this.peek(o));
      if (op === undefined) return left;
      this.#at++;
      const right = this.#binary(level + 1);
      this.#count();
      left = binary(op, left, right);
    }
  }

  #unary(): Evaluate {
    for (const op of ["!", "-", "+"]) {
      if (this.eat(op)) {
        if (++this.#depth > MAX_DEPTH) throw UNSUPPORTED;
        const operand = this.#unary();
        this.#depth--;
        this.#count();
        if (op === "!") return (r, a) => !operand(r, a);
        if (op === "-") return (r, a) => -(primitive(operand(r, a)) as number);
        return (r, a) => +(primitive(operand(r, a)) as number);
      }
    }
    return this.#postfix();
  }

  #postfix(): Evaluate {
    let base = this.#primary();
    for (;;) {
      if (this.eat(".")) {
        const token = this.#tokens[this.#at++];
        if (token?.kind !== "name") throw UNSUPPORTED;
        const key = token.text;
        const object = base;
        this.#count();
        base = (r, a) => member(object(r, a), key);
      } else if (this.eat("[")) {
        const key = this.expression();
        this.expect("]");
        const object = base;
        this.#count();
        base = (r, a) => member(object(r, a), propertyKey(key(r, a)));
      } else return base;
    }
  }

  #primary(): Evaluate {
    const token = this.#tokens[this.#at++];
    this.#count();
    if (token === undefined) throw UNSUPPORTED;
    if (token.kind === "number" || token.kind === "string") {
      const value = token.value;
      return () => value;
    }
    if (token.kind === "name") return this.#name(token.text);
    if (token.text === "(") {
      const inner = this.expression();
      this.expect(")");
      return inner;
    }
    if (token.text === "[") return this.#array();
    if (token.text === "{") return this.#object();
    throw UNSUPPORTED;
  }

  #name(text: string): Evaluate {
    if (text === "true") return () => true;
    if (text === "false") return () => false;
    if (text === "null") return () => null;
    const index = this.#params.indexOf(text);
    if (index >= 0) this.refs++;
    if (index === 0) return (r) => r;
    if (index === 1) return (_r, a) => a;
    // Not shadowed by a parameter: the global undefined (a name QuickJS cannot rebind).
    if (text === "undefined") return () => undefined;
    throw UNSUPPORTED;
  }

  #array(): Evaluate {
    const items: Evaluate[] = [];
    while (!this.eat("]")) {
      items.push(this.expression());
      if (!this.eat(",")) {
        this.expect("]");
        break;
      }
    }
    return (r, a) => items.map((item) => item(r, a));
  }

  #object(): Evaluate {
    const keys: string[] = [];
    const values: Evaluate[] = [];
    while (!this.eat("}")) {
      const token = this.#tokens[this.#at++];
      if (token === undefined) throw UNSUPPORTED;
      let key: string;
      if (token.kind === "name" || token.kind === "string") {
        key = token.kind === "name" ? token.text : token.value;
      } else throw UNSUPPORTED;
      // `__proto__: x` sets the prototype in a literal; a repeated key is last-wins with
      // the first's position: neither is worth matching here.
      if (key === "__proto__" || keys.includes(key)) throw UNSUPPORTED;
      if (token.kind === "name" && (this.peek(",") || this.peek("}"))) {
        // Shorthand `{ args }`: only a parameter (`{ true }` is no shorthand in JavaScript).
        if (!this.isParam(key)) throw UNSUPPORTED;
        values.push(this.#name(key));
      } else {
        this.expect(":");
        values.push(this.expression());
      }
      keys.push(key);
      if (!this.eat(",")) {
        this.expect("}");
        break;
      }
    }
    this.#count();
    return (r, a) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) out[keys[i]!] = values[i]!(r, a);
      return out;
    };
  }
}

const LEVELS: readonly (readonly string[])[] = [
  ["||"],
  ["&&"],
  // Loose equality is left to the sandbox (its coercions are not worth matching here).
  ["===", "!=="],
  ["<=", ">=", "<", ">"],
  ["+", "-"],
  ["*", "/", "%"],
];

type Primitive = string | number | boolean | null | undefined;

/** An operand of an arithmetic or comparing operator: objects would run their methods. */
function primitive(value: unknown): Primitive {
  if (value !== null && typeof value === "object") throw UNSUPPORTED;
  return value as Primitive;
}

function binary(op: string, left: Evaluate, right: Evaluate): Evaluate {
  const p = primitive;
  switch (op) {
    case "||":
      return (r, a) => left(r, a) || right(r, a);
    case "&&":
      return (r, a) => left(r, a) && right(r, a);
    case "===":
      return (r, a) => p(left(r, a)) === p(right(r, a));
    case "!==":
      return (r, a) => p(left(r, a)) !== p(right(r, a));
    case "<":
      return (r, a) => (p(left(r, a)) as number) < (p(right(r, a)) as number);
    case "<=":
      return (r, a) => (p(left(r, a)) as number) <= (p(right(r, a)) as number);
    case ">":
      return (r, a) => (p(left(r, a)) as number) > (p(right(r, a)) as number);
    case ">=":
      return (r, a) => (p(left(r, a)) as number) >= (p(right(r, a)) as number);
    case "+":
      return (r, a) => (p(left(r, a)) as number) + (p(right(r, a)) as number);
    case "-":
      return (r, a) => (p(left(r, a)) as number) - (p(right(r, a)) as number);
    case "*":
      return (r, a) => (p(left(r, a)) as number) * (p(right(r, a)) as number);
    case "/":
      return (r, a) => (p(left(r, a)) as number) / (p(right(r, a)) as number);
    default:
      return (r, a) => (p(left(r, a)) as number) % (p(right(r, a)) as number);
  }
}

/** A computed member's key, as both engines make it from a primitive. */
function propertyKey(value: unknown): string {
  return String(primitive(value));
}

/**
 * `object[key]` where it is plain data in both engines: an own property of a JSON object or
 * array, a string's length or character, or a name neither the object nor its prototypes
 * have (undefined). Inherited names and every other base give up.
 */
function member(object: unknown, key: string): unknown {
  if (typeof object === "string") {
    if (key === "length") return object.length;
    const index = canonicalIndex(key);
    if (index !== undefined && index < object.length) return object[index];
    if (key in String.prototype || index !== undefined) throw UNSUPPORTED;
    return undefined;
  }
  if (object === null || typeof object !== "object") throw UNSUPPORTED;
  if (Object.hasOwn(object, key)) return (object as Record<string, unknown>)[key];
  if (key in object) throw UNSUPPORTED;
  return undefined;
}

function canonicalIndex(key: string): number | undefined {
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && String(n) === key ? n : undefined;
}

export interface Expression {
  readonly evaluate: Evaluate;
  /** Uses of the parameters (an output holds the record or args at most this often). */
  readonly refs: number;
  /** Nodes of the expression (each literal adds at most a few bytes to an output). */
  readonly nodes: number;
}

/**
 * The function's evaluator when `code` is one arrow function of one or two plain parameters
 * whose body is an expression in this grammar; undefined for any other code.
 */
export function compileExpression(code: string): Expression | undefined {
  const tokens = tokenize(code);
  if (tokens === undefined) return undefined;
  let at = 0;
  const params: string[] = [];
  const param = () => {
    const token = tokens[at++];
    if (token?.kind !== "name" || RESERVED.has(token.text)) {
      throw UNSUPPORTED;
    }
    if (params.includes(token.text)) throw UNSUPPORTED;
    params.push(token.text);
  };
  const isPunct = (text: string) => {
    const token = tokens[at];
    return token?.kind === "punct" && token.text === text;
  };
  try {
    if (isPunct("(")) {
      at++;
      if (!isPunct(")")) {
        param();
        if (isPunct(",")) {
          at++;
          param();
        }
      }
      if (!isPunct(")")) return undefined;
      at++;
    } else param();
    if (!isPunct("=>") || isPunct("{")) return undefined;
    at++;
    // A block body (`=> { ... }`) is not an expression: the sandbox runs it.
    if (isPunct("{")) return undefined;
    const parser = new Parser(tokens.slice(at), params);
    const evaluate = parser.expression();
    return parser.done ? { evaluate, refs: parser.refs, nodes: parser.nodes } : undefined;
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}
