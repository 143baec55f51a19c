/**
 * What a namespace name is, wherever one is decoded (a request body, `namespaces.default`, a
 * deployment's `namespaces`): surrounding whitespace is trimmed (the spec's rule), the
 * trimmed name must not be empty (the spec's refusal), is at most 255 bytes (our bound) and
 * holds no control characters (our rule, below). Shape refusals carry the code
 * `invalid_namespace_name`; a name of the wrong JSON type keeps the generic decode code.
 */

import { type Decoder, string, withCode } from "../common/decode/index.ts";

export const MAX_NAMESPACE_NAME_BYTES = 255;

/**
 * Characters a namespace name may not hold anywhere: every control character (C0 including
 * NUL, tab and newline; DEL; C1) and the bidirectional embedding, override and isolate
 * controls. A name is a key in storage, in logs and on the wire: a NUL or newline can forge
 * a joined key or a log line, and a bidi control makes a name display as another one.
 * Other format characters (the zero-width joiner of emoji sequences) are letters of a name.
 */
const NAME_CHARACTERS = /^[^\p{Cc}\u202A-\u202E\u2066-\u2069]*$/u;

export function namespaceName(): Decoder<string> {
  return withCode(
    string({
      trim: true,
      minBytes: 1,
      maxBytes: MAX_NAMESPACE_NAME_BYTES,
      pattern: NAME_CHARACTERS,
      patternReason: "must not contain control characters or bidirectional controls",
      expected: "namespace name",
    }),
    { shape: "invalid_namespace_name" },
  );
}
