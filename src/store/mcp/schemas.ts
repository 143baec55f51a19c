/**
 * JSON Schema pieces the MCP tools share (tools.ts, versioning-tools.ts): names, refs,
 * receipts, pages and the object shapes of tool inputs.
 */

export type Schema = Record<string, unknown>;

export interface ToolSpec {
  readonly name: string;
  /** The store verb the tool calls with its arguments. */
  readonly verb: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: Schema;
  readonly outputSchema: Schema;
  /** MCP hints: whether the tool changes nothing, or may remove data. */
  readonly readOnly: boolean;
  readonly destructive: boolean;
}

export const NAME = { type: "string", minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9_.-]+$" };
export const collection = { ...NAME, description: "The collection's name." };
export const branch = { ...NAME, description: "The branch (default main)." };
export const key = {
  type: "string",
  minLength: 1,
  maxLength: 1024,
  description: "The document key.",
};
export const version = { type: "integer", minimum: 0, description: "A store version number." };
export const ref = {
  type: ["integer", "string"],
  minimum: 0,
  description:
    "A ref: a version number (of the branch), a branch name (its head), BRANCH@VERSION or a tag.",
};
export const message = {
  type: "string",
  minLength: 1,
  maxLength: 4096,
  description: "Commit message, kept in the receipt and the history.",
};
export const limit = { type: "integer", minimum: 1, description: "Rows per page (default 100)." };
export const author = {
  type: "string",
  minLength: 1,
  maxLength: 128,
  description: "Commit author.",
};
export const anyValue = { description: "Any JSON value." };

export const receipt = {
  type: "object",
  properties: {
    version: { type: "integer" },
    time: { type: "string" },
    author: { type: "string" },
    message: { type: "string" },
    parents: { type: "array", items: { type: "integer" } },
  },
  required: ["version", "time", "author"],
};
export const denied = {
  type: "integer",
  description: "Rows of this page the caller may not read (left out).",
};

export function input(properties: Schema, required: string[]): Schema {
  return { type: "object", properties, required, additionalProperties: false };
}

export function page(row: Schema, extra: Schema = {}): Schema {
  return {
    type: "object",
    properties: { rows: { type: "array", items: row }, next: {}, denied, ...extra },
    required: ["rows"],
  };
}

export const sweep = {
  type: "object",
  properties: {
    nodes_freed: { type: "integer" },
    node_bytes_before: { type: "integer" },
    node_bytes_after: { type: "integer" },
  },
};
