/**
 * Refusal wording shared by the store's configuration decoders. Two documents wrap every
 * refusal in a fixed sentence: the door file ("the door configuration is not valid",
 * then the reason) and the `mcp_http` policy (code `mcp_http_config_invalid`, "service
 * configuration is not valid"); the query group prefixes its fields' refusals with
 * "query setting". `withContext` rewrites a refusal raised inside a decoder that way while
 * keeping its kind and field, so tests and callers still switch on both.
 */

import type { Decoder, Path } from "../../common/decode/index.ts";
import { DecodeError } from "../../common/decode/index.ts";

/** The door's code for every refusal of its file or environment (the spec gives a message). */
export const DOOR_CONFIG_INVALID = "door_config_invalid";
export const DOOR_CONFIG_MESSAGE = "the door configuration is not valid";
export const MCP_HTTP_CONFIG_INVALID = "mcp_http_config_invalid";
export const MCP_HTTP_CONFIG_MESSAGE = "service configuration is not valid";

/** A refusal whose message is `text`, keeping the original kind, field and reason. */
export function rewrite(error: DecodeError, text: string, code = error.code): DecodeError {
  const copy = new DecodeError(error.kind, undefined, error.reason, code);
  return Object.assign(copy, { field: error.field, message: text });
}

/**
 * Runs `inner`; a refusal it raises is re-read as `<prefix>: <message>` (or, with
 * `fieldLabel`, `<prefix> <field>: <reason>`) under `code` when given.
 */
export function withContext<T>(
  inner: Decoder<T>,
  options: { prefix: string; code?: string; fieldLabel?: boolean },
): Decoder<T> {
  return {
    expected: inner.expected,
    run(value: unknown, path: Path) {
      try {
        return inner.run(value, path);
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error;
        const text = options.fieldLabel
          ? `${options.prefix} ${error.field}: ${error.reason}`
          : `${options.prefix}: ${error.message}`;
        throw rewrite(error, text, options.code ?? error.code);
      }
    },
  };
}
