/**
 * Request bodies: the only content type is `application/json`, parsed by the lossless JSON
 * reader of the decoding core, so u64 values stay exact and duplicate keys are refused. A
 * body that is not JSON is `malformed_json` (400); one nested deeper than MAX_JSON_DEPTH
 * (512) is `json_too_deep` (400), checked before parsing; one over `http.max_body_bytes` is
 * `body_too_large` (413, raised by Fastify's limit and mapped in errors.ts); any other
 * content type is `unsupported_media_type` (415). Replies are written by JSON.stringify with
 * a replacer that writes bigints and lossless numbers as raw JSON number text
 * (`JSON.rawJSON`), so a u64 in a response is exact; this is several times faster than a
 * JavaScript JSON writer on large listings.
 */

import type { FastifyInstance, FastifyReply } from "fastify";
import {
  isDecodeError,
  isLosslessNumber,
  JSON_TOO_DEEP,
  parseJson,
} from "../../common/decode/index.ts";
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
        const refusal =
          error.code === JSON_TOO_DEEP
            ? workflowError("json_too_deep", `request body ${error.reason}`)
            : workflowError("malformed_json", `request body is ${error.reason}`);
        done(refusal, undefined);
      }
    },
  );
  app.setReplySerializer((payload) => JSON.stringify(payload, exactNumbers));
}

/** `JSON.rawJSON` (V8, Node 21+) is not in TypeScript's lib yet. */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

export function exactNumbers(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return rawJSON(value.toString());
  if (isLosslessNumber(value)) return rawJSON(value.value);
  return value;
}

/** The content type every JSON answer carries (Fastify's own for a serialized reply). */
const JSON_TYPE = "application/json; charset=utf-8";

/**
 * An answer already written as JSON text (a hot route's own writer): sent as it is, with
 * the content type the reply serializer's answers carry. Return it from the handler.
 */
export function jsonText(reply: FastifyReply, text: string): string {
  reply.header("content-type", JSON_TYPE);
  return text;
}

/** A list as JSON text, as the reply serializer writes it; the empty list without a call. */
export function listText(items: readonly unknown[]): string {
  return items.length === 0 ? "[]" : JSON.stringify(items, exactNumbers);
}
