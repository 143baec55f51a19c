/**
 * The MCP tools: one per store verb an agent uses, each with a description for the model
 * and JSON Schemas of its input (the verb's arguments, field for field) and its output (the
 * verb's result). The store decodes the arguments itself, strictly, so a schema documents
 * the call and the store's `invalid_request` refuses what does not fit. The tool list is
 * built from the verbs the store names at hello: a verb a store does not serve (`query.run`
 * when queries are not enabled, `search.text` before it exists) is no tool, and a row added
 * here for a later verb appears once the store serves it.
 */

import {
  anyValue,
  author,
  branch,
  collection,
  denied,
  input,
  key,
  limit,
  message,
  NAME,
  page,
  receipt,
  ref,
  sweep,
  type ToolSpec,
} from "./schemas.ts";
import { SEARCH_TOOL } from "./search-tool.ts";
import { VERSIONING_TOOLS } from "./versioning-tools.ts";

export type { ToolSpec } from "./schemas.ts";

export const TOOLS: readonly ToolSpec[] = [
  {
    name: "collections_list",
    verb: "collections.list",
    title: "List collections",
    description: "Lists the store's collections in name order, a page at a time.",
    inputSchema: input({ after: { ...NAME, description: "Continue after this name." }, limit }, []),
    outputSchema: page({ type: "object" }),
    readOnly: true,
    destructive: false,
  },
  {
    name: "branches_list",
    verb: "branches.list",
    title: "List branches",
    description: "Lists a collection's branches with each head receipt, a page at a time.",
    inputSchema: input({ collection, after: NAME, limit }, ["collection"]),
    outputSchema: page({ type: "object" }),
    readOnly: true,
    destructive: false,
  },
  {
    name: "branches_create",
    verb: "branches.create",
    title: "Create a branch",
    description:
      "Creates a branch of a collection from another branch (main by default) at its head " +
      "or at from_version. Constant time at any size: use a branch to try changes apart.",
    inputSchema: input({ collection, branch, from_branch: branch, from_version: ref }, [
      "collection",
      "branch",
    ]),
    outputSchema: { type: "object", properties: { name: { type: "string" }, head: receipt } },
    readOnly: false,
    destructive: false,
  },
  {
    name: "branches_delete",
    verb: "branches.delete",
    title: "Delete a branch",
    description: "Deletes a branch and its history (main is protected).",
    inputSchema: input({ collection, branch }, ["collection", "branch"]),
    outputSchema: sweep,
    readOnly: false,
    destructive: true,
  },
  {
    name: "document_get",
    verb: "document.get",
    title: "Get a document",
    description: "Reads one document at the branch head or at an earlier version.",
    inputSchema: input({ collection, branch, key, version: ref }, ["collection", "key"]),
    outputSchema: {
      type: "object",
      properties: { found: { type: "boolean" }, value: anyValue, version: { type: "integer" } },
      required: ["found", "version"],
    },
    readOnly: true,
    destructive: false,
  },
  {
    name: "document_put",
    verb: "document.put",
    title: "Put documents",
    description:
      "Writes one document (key and value) or several (records) in one commit; returns the " +
      "commit's receipt.",
    inputSchema: input(
      {
        collection,
        branch,
        key,
        value: anyValue,
        records: {
          type: "array",
          minItems: 1,
          items: input({ key, value: anyValue }, ["key", "value"]),
        },
        author,
        message,
      },
      ["collection"],
    ),
    outputSchema: receipt,
    readOnly: false,
    destructive: false,
  },
  {
    name: "document_delete",
    verb: "document.delete",
    title: "Delete documents",
    description: "Deletes one document (key) or several (keys) in one commit.",
    inputSchema: input(
      {
        collection,
        branch,
        key,
        keys: { type: "array", minItems: 1, items: key },
        author,
        message,
      },
      ["collection"],
    ),
    outputSchema: receipt,
    readOnly: false,
    destructive: true,
  },
  {
    name: "document_list",
    verb: "document.list",
    title: "List documents",
    description:
      "Lists documents in key order (optionally under a prefix, at a version), a page at a time.",
    inputSchema: input(
      {
        collection,
        branch,
        version: ref,
        prefix: { type: "string", maxLength: 1024 },
        after: { type: "string", maxLength: 1024, description: "Continue after this key." },
        limit,
      },
      ["collection"],
    ),
    outputSchema: page(
      { type: "object", properties: { key: { type: "string" }, value: anyValue } },
      { version: { type: "integer" } },
    ),
    readOnly: true,
    destructive: false,
  },
  {
    name: "document_append_prune",
    verb: "document.append_prune",
    title: "Append to a log (memory)",
    description:
      "Appends records to a document's ordered log and keeps only the newest `keep` entries: " +
      "an agent's bounded memory. Read the log back with document_list and prefix KEY + NUL.",
    inputSchema: input(
      {
        collection,
        branch,
        key,
        records: { type: "array", items: anyValue },
        keep: { type: "integer", minimum: 0, description: "Entries to keep, newest first." },
        author,
        message,
      },
      ["collection", "key", "records", "keep"],
    ),
    outputSchema: {
      type: "object",
      properties: {
        receipt,
        appended: { type: "integer" },
        removed: { type: "integer" },
        length: { type: "integer" },
      },
      required: ["receipt"],
    },
    readOnly: false,
    destructive: false,
  },
  {
    name: "history_list",
    verb: "history.list",
    title: "Branch history",
    description:
      "Lists a branch's commit receipts, newest first, older than `before` when given (a " +
      "version number, a branch name, BRANCH@VERSION or a tag); next continues as before.",
    inputSchema: input({ collection, branch, before: ref, limit }, ["collection"]),
    outputSchema: { type: "object", properties: { rows: { type: "array", items: receipt } } },
    readOnly: true,
    destructive: false,
  },
  {
    name: "changes_list",
    verb: "changes.list",
    title: "Changes between versions",
    description:
      "Lists the documents added, removed or modified between two refs: `from` and `to` " +
      "(default the branch head), each a version number, a branch name, BRANCH@VERSION or a " +
      'tag, so from: "main", to: "agent-7" is the review diff of a branch; cursor continues.',
    inputSchema: input(
      {
        collection,
        branch,
        from_branch: branch,
        from: ref,
        to: ref,
        limit,
        cursor: { type: "string", minLength: 1, maxLength: 4096 },
      },
      ["collection", "from"],
    ),
    outputSchema: {
      type: "object",
      properties: { changes: { type: "array", items: { type: "object" } }, denied },
      required: ["changes"],
    },
    readOnly: true,
    destructive: false,
  },
  {
    name: "query_run",
    verb: "query.run",
    title: "Run a query",
    description:
      "Runs `code`, a JavaScript function expression (record, args) => output | output[] | " +
      "undefined, over each {key, value} of a branch in key order (optionally under a prefix, " +
      "at a version) in the store's sandbox; returns a page of {key, output} rows. Pass " +
      "`next` as `after` for the next page. Listed only when the store has queries enabled.",
    inputSchema: input(
      {
        collection,
        branch,
        version: ref,
        prefix: { type: "string", maxLength: 1024 },
        after: { type: "string", maxLength: 1024, description: "Continue after this key." },
        limit,
        code: { type: "string", minLength: 1, description: "The function expression." },
        args: { description: "Any JSON value, the function's second argument." },
      },
      ["collection", "code"],
    ),
    outputSchema: page(
      { type: "object", properties: { key: { type: "string" }, output: anyValue } },
      { version: { type: "integer" }, scanned: { type: "integer" } },
    ),
    readOnly: true,
    destructive: false,
  },
  ...VERSIONING_TOOLS,
  SEARCH_TOOL,
];

/** The tools whose verb the store serves, in table order. */
export function offeredTools(verbs: readonly string[]): ToolSpec[] {
  const served = new Set(verbs);
  return TOOLS.filter((tool) => served.has(tool.verb));
}

/** A tool as `tools/list` describes it (shared with the workflow server's endpoint). */
export { describeTool } from "../../common/mcp-tool.ts";
