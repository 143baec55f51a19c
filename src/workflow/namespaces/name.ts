/**
 * What a namespace name is, wherever one is decoded (a request body, `namespaces.default`):
 * surrounding whitespace is trimmed (the spec's rule), the trimmed name must not be empty
 * (the spec's refusal) and is at most 255 bytes (our bound). Shape refusals carry the code
 * `invalid_namespace_name`; a name of the wrong JSON type keeps the generic decode code.
 */

import { type Decoder, string, withCode } from "../../common/decode/index.ts";

export const MAX_NAMESPACE_NAME_BYTES = 255;

export function namespaceName(): Decoder<string> {
  return withCode(
    string({
      trim: true,
      minBytes: 1,
      maxBytes: MAX_NAMESPACE_NAME_BYTES,
      expected: "namespace name",
    }),
    { shape: "invalid_namespace_name" },
  );
}
