/**
 * The MCP tool for `search.text`: finding records by meaning, words or both. Kept beside the
 * tool table so the table stays one screenful per group of verbs.
 */

import { anyValue, branch, collection, denied, input, ref, type ToolSpec } from "./schemas.ts";

export const SEARCH_TOOL: ToolSpec = {
  name: "search_text",
  verb: "search.text",
  title: "Search a field",
  description:
    "Finds the k records whose embedded field best matches `text`: by meaning (mode " +
    "vector), by words (keyword, BM25) or both fused (hybrid, the default), at the head " +
    "of a branch or at a past version, optionally under a key prefix. The field must be " +
    "the collection's embedded field (embed.enable). Rows are best first.",
  inputSchema: input(
    {
      collection,
      branch,
      version: ref,
      field: {
        type: "string",
        minLength: 1,
        maxLength: 1024,
        description: "The embedded field, e.g. $.body.",
      },
      text: { type: "string", minLength: 1, description: "The question." },
      k: { type: "integer", minimum: 1, description: "Rows to return (default 10)." },
      mode: { type: "string", enum: ["vector", "keyword", "hybrid"] },
      prefix: { type: "string", maxLength: 1024, description: "Only keys with this prefix." },
      exact: { type: "boolean", description: "Exact vector search even where an index exists." },
      values: { type: "boolean", description: "Include each record's value (default true)." },
    },
    ["collection", "field", "text"],
  ),
  outputSchema: {
    type: "object",
    properties: {
      rows: {
        type: "array",
        items: {
          type: "object",
          properties: {
            key: { type: "string" },
            score: { type: "number" },
            window: { type: "integer" },
            value: anyValue,
          },
          required: ["key", "score"],
        },
      },
      version: { type: "integer" },
      mode: { type: "string" },
      denied,
    },
    required: ["rows", "version", "mode"],
  },
  readOnly: true,
  destructive: false,
};
