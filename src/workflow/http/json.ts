/**
 * Request bodies: the only content type is `application/json`, parsed by the lossless JSON
 * reader of the decoding core, so u64 values stay exact and duplicate keys are refused. A
 * body that is not JSON is `malformed_json` (400); one over `http.max_body_bytes` is
 * `body_too_large` (413, raised by Fastify's limit and mapped in errors.ts); any other
 * content type is `unsupported_media_type` (415). Replies are written by the same library,
 * so a bigint in a response is written as an exact JSON number.
 */

import type { FastifyInstance } from "fastify";
import { stringify } from "lossless-json";
import { isDecodeError, parseJson } from "../../common/decode/index.ts";
import { workflowError } from "../errors.ts";

export function installJson(app: FastifyInstance, maxBodyBytes: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "application/json",
    { parseAs: "string", bodyLimit: maxBodyBytes },
    (_request, body, done) => {
      try {
        done(null, parseJson(body as string));
      } catch (error) {
        if (!isDecodeError(error)) throw error;
        done(workflowError("malformed_json", `request body is ${error.reason}`), undefined);
      }
    },
  );
  app.setReplySerializer((payload) => stringify(payload) ?? "null");
}
