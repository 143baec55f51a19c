/**
 * JSON between MCP clients and the HTTP routes the tools call, without losing numbers: the
 * request body is parsed strictly (duplicate keys and deep nesting refused, as the HTTP API
 * does) into plain values the SDK's schemas accept, an integer beyond 2^53 (or any number a
 * JS number would change) kept as `JSON.rawJSON` text, so it is written back exactly when a
 * tool passes it on; a route's answer is read the same way.
 */

import { isLosslessNumber, parseJson } from "../../common/decode/index.ts";

/** `JSON.rawJSON` and the reviver's source text (V8, Node 21+) are not in TypeScript's lib. */
type SourceReviver = (key: string, value: unknown, context: { source?: string }) => unknown;
const json = JSON as unknown as {
  rawJSON(text: string): unknown;
  parse(text: string, reviver: SourceReviver): unknown;
};

/** A parsed lossless value as plain JSON values, inexact numbers as raw JSON text. */
function plain(value: unknown): unknown {
  if (isLosslessNumber(value)) {
    const n = Number(value.value);
    return String(n) === value.value ? n : json.rawJSON(value.value);
  }
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    // defineProperty: an own "__proto__" key stays an own key instead of a prototype.
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, {
        value: plain(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** An MCP request body. Throws the decoding core's refusal (`json_too_deep`, syntax). */
export function parseMessage(text: string): unknown {
  return plain(parseJson(text));
}

/** A route's JSON answer, numbers exact (a route never answers duplicate keys). */
export function parseAnswer(text: string): unknown {
  return json.parse(text, (_key: string, value: unknown, context: { source?: string }) =>
    typeof value === "number" && context.source !== undefined && String(value) !== context.source
      ? json.rawJSON(context.source)
      : value,
  );
}
