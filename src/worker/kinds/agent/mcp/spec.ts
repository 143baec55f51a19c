/**
 * The `mcp` field of an agent action: the MCP servers (Streamable HTTP) whose tools the agent
 * may call, by key. Each names its URL, how the worker gets a pass for it (the client
 * credentials grant of an OAuth issuer such as skein-idp, or a bearer read from a file), the
 * tools offered to the model (all when absent), the tools that wait for RespondToApproval,
 * the bounds of one call, and optionally the branch the calls are pinned to (a JSONata
 * expression over the attempt, its base branch and, for the run console's link, the door
 * that shows the branch's diff). Decoded once with the worker document.
 */

import {
  array,
  type Decoded,
  object,
  optional,
  refine,
  string,
  u32,
  withDefault,
} from "../../../../common/decode/index.ts";

/** Bounds of one tool call (docs/operations.md "Limits and hardening"). */
export const MCP_CALL_TIMEOUT_MS = 30_000;
export const MCP_RESULT_MAX_BYTES = 65_536;
/** Bytes of a call's arguments kept in the transcript; the model's full text goes to the server. */
export const TRANSCRIPT_ARGUMENTS_MAX_BYTES = 16_384;

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const toolName = string({
  pattern: TOOL_NAME,
  patternReason: "must be 1 to 64 letters, digits, '_' or '-' (a model's function name)",
});

const httpUrl = refine(string({ minBytes: 1, maxBytes: 2048 }), (text) => {
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http(s) URL";
    if (url.username !== "" || url.password !== "") return "must not carry credentials";
    return undefined;
  } catch {
    return "must be a URL";
  }
});

const auth = refine(
  object({
    client_credentials: optional(
      object({
        /** The OAuth issuer; its token endpoint is read from its discovery document. */
        issuer: httpUrl,
        client_id: string({ minBytes: 1, maxBytes: 255 }),
        /** One line holding the client secret (relative: to the document's folder). */
        secret_file: string({ minBytes: 1 }),
        /** RFC 8707 resource indicator (skein-idp: `urn:skein:store:<database>`). */
        resource: optional(string({ minBytes: 1, maxBytes: 2048 })),
      }),
    ),
    /** One line holding a bearer to send as it is. */
    bearer_file: optional(string({ minBytes: 1 })),
  }),
  (a) =>
    (a.client_credentials === undefined) === (a.bearer_file === undefined)
      ? "must have exactly one of client_credentials or bearer_file"
      : undefined,
);

export const mcpServerSpec = object({
  url: httpUrl,
  /** Absent: the server is called without a bearer. */
  auth: optional(auth),
  /** The tools offered to the model (the allow-list); absent: every tool the server lists. */
  tools: optional(array(toolName, { max: 256 })),
  /** Tools whose calls wait for a RespondToApproval control. */
  approval: withDefault(array(toolName, { max: 256 }), []),
  /**
   * A JSONata expression over `{input, namespace, workflow_id, run_id, activity_id}` giving
   * the branch every call that takes one is pinned to; absent: calls are not pinned.
   */
  branch: optional(string({ minBytes: 1, maxBytes: 4096 })),
  /** The branch a missing pinned branch is created from. */
  from: withDefault(string({ minBytes: 1, maxBytes: 128 }), "main"),
  /** Where a person reviews the branch: the door's origin and its name for this store. */
  door: optional(object({ origin: httpUrl, store: string({ minBytes: 1, maxBytes: 128 }) })),
  timeout_ms: withDefault(u32({ min: 1, max: 3_600_000 }), MCP_CALL_TIMEOUT_MS),
  max_result_bytes: withDefault(u32({ min: 256, max: 16 * 1024 * 1024 }), MCP_RESULT_MAX_BYTES),
});
export type McpServerSpec = Decoded<typeof mcpServerSpec>;
