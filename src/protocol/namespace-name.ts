/**
 * What a namespace name is, wherever one is decoded (a request body, `namespaces.default`, a
 * deployment's `namespaces`): surrounding whitespace is trimmed (the spec's rule), the
 * trimmed name must not be empty (the spec's refusal), is at most 255 bytes (our bound) and
 * holds no control or bidirectional control characters (the decoder's `noControl`). Shape
 * refusals carry the code `invalid_namespace_name`; a name of the wrong JSON type keeps the
 * generic decode code.
 */

import { type Decoder, string, withCode } from "../common/decode/index.ts";

export const MAX_NAMESPACE_NAME_BYTES = 255;

export function namespaceName(): Decoder<string> {
  return withCode(
    string({
      trim: true,
      minBytes: 1,
      maxBytes: MAX_NAMESPACE_NAME_BYTES,
      // Every control character (C0 including NUL, tab and newline; DEL; C1) and the bidi
      // controls: a name is a key in storage, in logs and on the wire.
      noControl: true,
      expected: "namespace name",
    }),
    { shape: "invalid_namespace_name" },
  );
}
