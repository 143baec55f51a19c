/**
 * Decoders for every verb's arguments, declared as data. They run once, at the socket
 * edge; the engine receives typed values. Names of collections and branches are 1 to 128
 * bytes of letters, digits, `_`, `-` and `.` (not `.` or `..`); keys are 1 to 1024 bytes
 * without NUL (NUL separates a document from its log entries).
 */

import {
  absolutePath,
  array,
  boolean,
  type Decoder,
  integer,
  object,
  oneOf,
  optional,
  refine,
  refuse,
  string,
  u32,
  withDefault,
} from "../../common/decode/index.ts";
import { INT64_MIN, UINT64_END } from "../codec/json-value.ts";
import { QUERY_CODE_BYTES } from "../query/limits.ts";

export const name = refine(
  string({
    minBytes: 1,
    maxBytes: 128,
    pattern: /^[A-Za-z0-9_.-]+$/,
    patternReason: "must be letters, digits, _, - or .",
    expected: "name",
  }),
  (value) => (value === "." || value === ".." ? "must not be . or .." : undefined),
);

const MAX_KEY_BYTES = 1024;

export const key = refine(
  string({ minBytes: 1, maxBytes: MAX_KEY_BYTES, expected: "key" }),
  (value) => (value.includes("\u0000") ? "must not contain NUL" : undefined),
);

export const version = integer("u64", { max: Number.MAX_SAFE_INTEGER });
const limit = u32({ min: 1 });
const author = string({ minBytes: 1, maxBytes: 128 });
/** A commit message: 1 to 4096 bytes. */
const message = string({ minBytes: 1, maxBytes: 4096 });

/**
 * A ref: a version number, or a string naming a branch (its head), `branch@version` or a
 * tag (engine/refs.ts resolves it). Strings are checked for shape here: a name, or a name,
 * `@` and digits.
 */
export const ref: Decoder<number | string> = {
  expected: "version number or ref",
  run(value, path) {
    if (typeof value !== "string") return version.run(value, path);
    const at = value.lastIndexOf("@");
    const branchPart = at < 0 ? value : value.slice(0, at);
    if (at >= 0 && !/^\d{1,16}$/.test(value.slice(at + 1))) {
      refuse("shape", path, "must be a name, NAME@VERSION or a version number");
    }
    name.run(branchPart, path);
    return value;
  },
};

const strategy = withDefault(oneOf(["fail", "ours", "theirs"] as const), "fail");

/**
 * Any JSON value: null, booleans, finite numbers, integers of every MessagePack width
 * (bigints beyond 2^53), strings, arrays and plain objects.
 */
export const jsonValue: Decoder<unknown> = {
  expected: "JSON value",
  run(value, path) {
    check(value, path, 0);
    return value;
  },
};

function check(value: unknown, path: Parameters<Decoder<unknown>["run"]>[1], depth: number): void {
  if (depth > 128) refuse("shape", path, "is nested more than 128 levels deep");
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value))
      refuse("type", path, "expected a JSON value, found a non-finite number");
    return;
  }
  // An integer beyond 2^53 (MessagePack uint 64 / int 64); the socket never decodes more.
  if (typeof value === "bigint") {
    if (value < INT64_MIN || value >= UINT64_END)
      refuse("overflow", path, "is an integer outside the 64-bit range");
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) check(item, path, depth + 1);
    return;
  }
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    // for…in, not Object.values: no array per object of every record a put carries (half
    // this check's time). The prototype is Object.prototype, whose properties are not
    // enumerable, so it visits the own keys, an own "__proto__" (from a decoded map) too.
    for (const key in value) check((value as Record<string, unknown>)[key], path, depth + 1);
    return;
  }
  refuse("type", path, `expected a JSON value, found ${typeof value}`);
}

/** The general decoder of a put's records: the one that words every refusal. */
const recordList = array(object({ key, value: jsonValue }), { min: 1 });

/**
 * A put's records: 1 or more `{key, value}`. A batch carries up to thousands of them, so a
 * list whose records are all well formed (a plain object with exactly `key` and `value`, a
 * key as `key` accepts it, a JSON value) is read in one pass, with no path, key list or
 * decoder call per record; any other list goes through `recordList`, which refuses it as
 * it always did (the first bad record, the same path and words) or decodes it the same.
 */
export const records: Decoder<{ key: string; value: unknown }[]> = {
  expected: recordList.expected,
  ...(recordList.schema === undefined ? {} : { schema: recordList.schema }),
  run(value, path) {
    return wellFormedRecords(value) ?? recordList.run(value, path);
  },
};

/** The records of a list whose every record is well formed; undefined for any other. */
function wellFormedRecords(value: unknown): { key: string; value: unknown }[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const out: { key: string; value: unknown }[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const raw: unknown = value[i];
    if (typeof raw !== "object" || raw === null || Object.getPrototypeOf(raw) !== Object.prototype)
      return undefined;
    let fields = 0;
    for (const field in raw) {
      if (field !== "key" && field !== "value") return undefined;
      fields++;
    }
    if (fields !== 2) return undefined;
    const { key: k, value: v } = raw as { key: unknown; value: unknown };
    if (!wellFormedKey(k) || !isJsonValue(v)) return undefined;
    out[i] = { key: k, value: v };
  }
  return out;
}

/** True for what `key` accepts: 1 to 1024 bytes of UTF-8 (3 at most per code unit), no NUL. */
function wellFormedKey(k: unknown): k is string {
  if (typeof k !== "string" || k.length === 0) return false;
  if (k.length > MAX_KEY_BYTES / 3 && Buffer.byteLength(k, "utf8") > MAX_KEY_BYTES) return false;
  return !k.includes("\u0000");
}

/** True when `jsonValue` accepts the value (its check, without a refusal's path). */
function isJsonValue(value: unknown): boolean {
  try {
    check(value, undefined, 0);
    return true;
  } catch {
    return false;
  }
}

const where = {
  collection: name,
  branch: withDefault(name, "main"),
};

export const requests = {
  "collections.list": object({ after: optional(name), limit: optional(limit) }),
  "collections.create": object({
    collection: name,
    author: optional(author),
    message: optional(message),
  }),
  "collections.delete": object({ collection: name }),
  "branches.list": object({ collection: name, after: optional(name), limit: optional(limit) }),
  "branches.create": object({
    collection: name,
    branch: name,
    from_branch: withDefault(name, "main"),
    from_version: optional(ref),
  }),
  "branches.delete": object({ collection: name, branch: name }),
  "branches.merge": object({
    collection: name,
    from: ref,
    into: name,
    strategy,
    dry_run: withDefault(boolean(), false),
    expect_head: optional(version),
    expect_from: optional(version),
    message: optional(message),
    author: optional(author),
  }),
  "branches.revert": object({
    ...where,
    version: ref,
    strategy,
    dry_run: withDefault(boolean(), false),
    expect_head: optional(version),
    message: optional(message),
    author: optional(author),
  }),
  "tags.create": object({
    collection: name,
    tag: name,
    branch: withDefault(name, "main"),
    version: optional(ref),
    message: optional(message),
    author: optional(author),
  }),
  "tags.list": object({ collection: name, after: optional(name), limit: optional(limit) }),
  "tags.delete": object({ collection: name, tag: name }),
  "document.get": object({ ...where, key, version: optional(ref) }),
  "document.put": object(
    {
      ...where,
      key: optional(key),
      value: optional(jsonValue),
      records: optional(records),
      expect_head: optional(version),
      author: optional(author),
      message: optional(message),
    },
    {
      inspect(raw, path) {
        const single = Object.hasOwn(raw, "key") || Object.hasOwn(raw, "value");
        const batch = Object.hasOwn(raw, "records");
        if (single === batch) refuse("rule", path, "give either key and value, or records");
        if (single && !(Object.hasOwn(raw, "key") && Object.hasOwn(raw, "value"))) {
          refuse("rule", path, "key and value go together");
        }
      },
    },
  ),
  "document.delete": object(
    {
      ...where,
      key: optional(key),
      keys: optional(array(key, { min: 1 })),
      expect_head: optional(version),
      author: optional(author),
      message: optional(message),
    },
    {
      inspect(raw, path) {
        if (Object.hasOwn(raw, "key") === Object.hasOwn(raw, "keys")) {
          refuse("rule", path, "give either key or keys");
        }
      },
    },
  ),
  "document.list": object({
    ...where,
    version: optional(ref),
    prefix: optional(string({ maxBytes: 1024 })),
    after: optional(string({ maxBytes: 1024 })),
    limit: optional(limit),
  }),
  "document.append_prune": object({
    ...where,
    key,
    records: array(jsonValue),
    keep: u32(),
    author: optional(author),
    message: optional(message),
  }),
  // `before` is a ref: a number continues a page (`next`), a name starts below its version.
  "history.list": object({ ...where, before: optional(ref), limit: optional(limit) }),
  "history.release": object({}),
  "changes.list": object({
    ...where,
    from_branch: optional(name),
    from: ref,
    to: optional(ref),
    limit: optional(limit),
    cursor: optional(string({ minBytes: 1, maxBytes: 4096 })),
  }),
  "store.stats": object({}),
  "store.backup": object({ path: absolutePath() }),
  "query.run": object({
    ...where,
    version: optional(ref),
    prefix: optional(string({ maxBytes: 1024 })),
    after: optional(string({ maxBytes: 1024 })),
    limit: optional(limit),
    code: string({ minBytes: 1, maxBytes: QUERY_CODE_BYTES }),
    args: optional(jsonValue),
  }),
  // The count and size of texts are the embedding service's own refusals
  // (embed_request_too_large, embed_input_too_large), so the decoder leaves them to it.
  "embed.texts": object({
    texts: array(string()),
    kind: withDefault(oneOf(["document", "question"] as const), "document"),
  }),
  "embed.enable": object({ collection: name, field: string({ minBytes: 1, maxBytes: 1024 }) }),
  "embed.status": object({ collection: name }),
  "embed.vectors": object({
    ...where,
    version: optional(ref),
    keys: array(key, { min: 1, max: 1024 }),
  }),
  // k is bounded by max_page (page_limit), checked by the handler.
  "search.text": object({
    ...where,
    version: optional(ref),
    field: string({ minBytes: 1, maxBytes: 1024 }),
    text: string({ minBytes: 1 }),
    k: withDefault(limit, 10),
    mode: withDefault(oneOf(["vector", "keyword", "hybrid"] as const), "hybrid"),
    prefix: optional(string({ maxBytes: 1024 })),
    exact: withDefault(boolean(), false),
    values: withDefault(boolean(), true),
  }),
} as const;
