/**
 * The tokens of the query fast path's expressions (expression.ts): names, decimal numbers,
 * double-quoted strings with JSON's escapes, and punctuation, with whitespace and comments
 * skipped. Anything else (single quotes, templates, regular expressions, other number
 * forms) makes the whole code untokenizable, and the sandbox runs it.
 */

export type Token =
  | { readonly kind: "name"; readonly text: string }
  | { readonly kind: "number"; readonly value: number }
  | { readonly kind: "string"; readonly value: string }
  | { readonly kind: "punct"; readonly text: string };

const PUNCTUATION = [
  // Recognised only so that they are not split into tokens that mean something else
  // (`a\n++b` is not `a + +b`); the parser takes none of them.
  ">>>",
  "...",
  "**",
  "++",
  "--",
  "??",
  "?.",
  "<<",
  ">>",
  "===",
  "!==",
  "=>",
  "==",
  "!=",
  "<=",
  ">=",
  "&&",
  "||",
  "<",
  ">",
  "+",
  "-",
  "*",
  "/",
  "%",
  "!",
  "?",
  ":",
  ".",
  ",",
  "=",
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
];
const NAME = /^[A-Za-z_$][A-Za-z0-9_$]*/;
const NUMBER = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/;
const STRING = /^"(?:[^"\\\n\r\u2028\u2029]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/;
// A line comment ends at any of JavaScript's line terminators, not only \n.
const SPACE = /^(?:\s|\/\/[^\n\r\u2028\u2029]*|\/\*[\s\S]*?\*\/)+/;
/**
 * Words that may not name a parameter: the reserved words, and those that some mode or
 * context treats specially (refusing one here only sends the code to the sandbox).
 */
export const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export " +
    "extends false finally for function if import in instanceof new null return super " +
    "switch this throw true try typeof var void while with await yield let static async " +
    "eval arguments implements interface package private protected public undefined"
  ).split(" "),
);

export function tokenize(code: string): Token[] | undefined {
  const tokens: Token[] = [];
  let rest = code;
  while (rest.length > 0) {
    const space = SPACE.exec(rest);
    if (space !== null) {
      rest = rest.slice(space[0].length);
      continue;
    }
    const name = NAME.exec(rest);
    const number = name === null ? NUMBER.exec(rest) : null;
    const string = STRING.exec(rest);
    const punct = PUNCTUATION.find((p) => rest.startsWith(p));
    let length: number;
    if (name !== null) {
      tokens.push({ kind: "name", text: name[0] });
      length = name[0].length;
    } else if (
      number !== null &&
      !/^0\d/.test(number[0]) && // sloppy-mode octal (012 is 10)
      !/^[A-Za-z_$\d.]/.test(rest.slice(number[0].length))
    ) {
      tokens.push({ kind: "number", value: Number(number[0]) });
      length = number[0].length;
    } else if (string !== null) {
      tokens.push({ kind: "string", value: JSON.parse(string[0]) as string });
      length = string[0].length;
    } else if (punct !== undefined) {
      tokens.push({ kind: "punct", text: punct });
      length = punct.length;
    } else return undefined;
    rest = rest.slice(length);
  }
  return tokens;
}
