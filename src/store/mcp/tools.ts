/**
 * The MCP tools: one per store verb an agent uses, each with a description for the model
 * and JSON Schemas of its input (the verb's arguments, field for field) and its output (the
 * verb's result). The store decodes the arguments itself, strictly, so a schema documents
 * the call and the store's `invalid_request` refuses what does not fit. The tool list is
 * built from the verbs the store names at hello: a verb a store does not serve (`query.run`
 * when queries are not enabled, `search.text` before it exists) is no tool, and a row added
 * here for a later verb appears once the store serves it.
 */

type Schema = Record<string, unknown>;

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

const NAME = { type: "string", minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9_.-]+$" };
const collection = { ...NAME, description: "The collection's name." };
const branch = { ...NAME, description: "The branch (default main)." };
const key = { type: "string", minLength: 1, maxLength: 1024, description: "The document key." };
const version = { type: "integer", minimum: 0, description: "A store version number." };
const limit = { type: "integer", minimum: 1, description: "Rows per page (default 100)." };
const author = { type: "string", minLength: 1, maxLength: 128, description: "Commit author." };
const anyValue = { description: "Any JSON value." };

const receipt = {
  type: "object",
  properties: {
    version: { type: "integer" },
    time: { type: "string" },
    author: { type: "string" },
  },
  required: ["version", "time", "author"],
};
const denied = {
  type: "integer",
  description: "Rows of this page the caller may not read (left out).",
};

function input(properties: Schema, required: string[]): Schema {
  return { type: "object", properties, required, additionalProperties: false };
}

function page(row: Schema, extra: Schema = {}): Schema {
  return {
    type: "object",
    properties: { rows: { type: "array", items: row }, next: {}, denied, ...extra },
    required: ["rows"],
  };
}

const sweep = {
  type: "object",
  properties: {
    nodes_freed: { type: "integer" },
    node_bytes_before: { type: "integer" },
    node_bytes_after: { type: "integer" },
  },
};

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
    inputSchema: input({ collection, branch, from_branch: branch, from_version: version }, [
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
    inputSchema: input({ collection, branch, key, version }, ["collection", "key"]),
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
      { collection, branch, key, keys: { type: "array", minItems: 1, items: key }, author },
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
        version,
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
    description: "Lists a branch's commit receipts, newest first; next continues as before.",
    inputSchema: input({ collection, branch, before: version, limit }, ["collection"]),
    outputSchema: { type: "object", properties: { rows: { type: "array", items: receipt } } },
    readOnly: true,
    destructive: false,
  },
  {
    name: "changes_list",
    verb: "changes.list",
    title: "Changes between versions",
    description:
      "Lists the documents added, removed or modified between version `from` (of " +
      "from_branch, default the same branch) and `to` (default the head); cursor continues.",
    inputSchema: input(
      {
        collection,
        branch,
        from_branch: branch,
        from: version,
        to: version,
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
        version,
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
  {
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
        version,
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
  },
];

/** The tools whose verb the store serves, in table order. */
export function offeredTools(verbs: readonly string[]): ToolSpec[] {
  const served = new Set(verbs);
  return TOOLS.filter((tool) => served.has(tool.verb));
}

/** A tool as `tools/list` describes it. */
export function describeTool(tool: ToolSpec) {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema as { type: "object" },
    outputSchema: tool.outputSchema as { type: "object" },
    annotations: {
      title: tool.title,
      readOnlyHint: tool.readOnly,
      destructiveHint: tool.destructive,
      openWorldHint: false,
    },
  };
}
