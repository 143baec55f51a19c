/**
 * Client subcommands for the common verbs (`get`, `put`, `delete`, `list`, `collections`,
 * `branches`, `history`, `changes`, `backup`): positional arguments and options mapped onto one
 * verb's arguments, then the same call-and-print as `skein-store call`. Wherever a version
 * is taken, a ref is too (a number, a branch, BRANCH@VERSION or a tag).
 */

import { resolve } from "node:path";
import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { branchOption, defined, readValue, refArg, signed, signOptions, whole } from "./args.ts";
import { callVerb, socketOption } from "./call.ts";
import { renderLog } from "./versioning-commands.ts";

export const getCommand: Command = {
  name: "get",
  summary: "print a record (document.get)",
  help: "--socket PATH COLLECTION KEY [--branch B] [--version V]",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...socketOption, ...branchOption, version: { type: "string" } },
      { min: 2, max: 2 },
    );
    return callVerb(
      io,
      values,
      "document.get",
      defined({
        collection: positionals[0],
        key: positionals[1],
        branch: values.branch,
        version: refArg(values.version),
      }),
    );
  },
};

export const putCommand: Command = {
  name: "put",
  summary: "write a record and print the receipt (document.put)",
  help: "--socket PATH COLLECTION KEY (JSON | - | --value-file FILE) [--branch B] [--author A] [-m MESSAGE]\n\n  -             read the JSON value from stdin\n  --value-file  read the JSON value from FILE",
  async run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...socketOption, ...branchOption, ...signOptions, "value-file": { type: "string" } },
      { min: 2, max: 3 },
    );
    const value = await readValue(positionals[2], values["value-file"]);
    return callVerb(
      io,
      values,
      "document.put",
      defined({
        collection: positionals[0],
        key: positionals[1],
        value,
        branch: values.branch,
        ...signed(values),
      }),
    );
  },
};

export const deleteCommand: Command = {
  name: "delete",
  summary: "delete records and print the receipt (document.delete)",
  help: "--socket PATH COLLECTION KEY... [--branch B] [--author A] [-m MESSAGE]",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...socketOption, ...branchOption, ...signOptions },
      { min: 2 },
    );
    return callVerb(
      io,
      values,
      "document.delete",
      defined({
        collection: positionals[0],
        keys: positionals.slice(1),
        branch: values.branch,
        ...signed(values),
      }),
    );
  },
};

export const listCommand: Command = {
  name: "list",
  summary: "print a page of records (document.list)",
  help: "--socket PATH COLLECTION [--branch B] [--version V] [--prefix P] [--after K] [--limit N]",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      {
        ...socketOption,
        ...branchOption,
        version: { type: "string" },
        prefix: { type: "string" },
        after: { type: "string" },
        limit: { type: "string" },
      },
      { min: 1, max: 1 },
    );
    return callVerb(
      io,
      values,
      "document.list",
      defined({
        collection: positionals[0],
        branch: values.branch,
        version: refArg(values.version),
        prefix: values.prefix,
        after: values.after,
        limit: whole(values.limit, "limit"),
      }),
    );
  },
};

export const collectionsCommand: Command = {
  name: "collections",
  summary: "list, create or delete collections",
  help: "--socket PATH [list | create NAME | delete NAME]",
  run(args, io) {
    const { values, positionals } = parseOptions(args, socketOption, { max: 2 });
    const [action = "list", name] = positionals;
    if (action === "list" && name === undefined)
      return callVerb(io, values, "collections.list", {});
    if ((action === "create" || action === "delete") && name !== undefined) {
      return callVerb(io, values, `collections.${action}`, { collection: name });
    }
    throw new UsageError("expected list, create NAME or delete NAME");
  },
};

export const branchesCommand: Command = {
  name: "branches",
  summary: "list, create or delete a collection's branches",
  help: "--socket PATH COLLECTION [list | create NAME [--from BRANCH] [--version V] | delete NAME]",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...socketOption, from: { type: "string" }, version: { type: "string" } },
      { min: 1, max: 3 },
    );
    const [collection, action = "list", name] = positionals;
    if (action === "list" && name === undefined) {
      return callVerb(io, values, "branches.list", { collection });
    }
    if (action === "create" && name !== undefined) {
      return callVerb(
        io,
        values,
        "branches.create",
        defined({
          collection,
          branch: name,
          from_branch: values.from,
          from_version: refArg(values.version),
        }),
      );
    }
    if (action === "delete" && name !== undefined) {
      return callVerb(io, values, "branches.delete", { collection, branch: name });
    }
    throw new UsageError("expected list, create NAME or delete NAME");
  },
};

export const historyCommand: Command = {
  name: "history",
  summary: "list a branch's retained versions (history.list)",
  help: "--socket PATH COLLECTION [--branch B] [--before V] [--limit N]",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...socketOption, ...branchOption, before: { type: "string" }, limit: { type: "string" } },
      { min: 1, max: 1 },
    );
    return callVerb(
      io,
      values,
      "history.list",
      defined({
        collection: positionals[0],
        branch: values.branch,
        before: whole(values.before, "before"),
        limit: whole(values.limit, "limit"),
      }),
      renderLog,
    );
  },
};

/** `log`: history under the name reviewers reach for, as a table on a terminal. */
export const logCommand: Command = {
  ...historyCommand,
  name: "log",
  summary: "a branch's versions with authors, messages and merges (history.list)",
};

export const changesCommand: Command = {
  name: "changes",
  summary: "list changes between two versions (changes.list)",
  help: "--socket PATH COLLECTION --from REF [--to REF] [--branch B] [--from-branch B] [--limit N] [--cursor C]\n\nREF: a version number, a branch (its head), BRANCH@VERSION or a tag.",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      {
        ...socketOption,
        ...branchOption,
        from: { type: "string" },
        to: { type: "string" },
        "from-branch": { type: "string" },
        limit: { type: "string" },
        cursor: { type: "string" },
      },
      { min: 1, max: 1 },
    );
    if (values.from === undefined) throw new UsageError("--from REF is required");
    return callVerb(
      io,
      values,
      "changes.list",
      defined({
        collection: positionals[0],
        branch: values.branch,
        from_branch: values["from-branch"],
        from: refArg(values.from),
        to: refArg(values.to),
        limit: whole(values.limit, "limit"),
        cursor: values.cursor,
      }),
    );
  },
};

export const backupCommand: Command = {
  name: "backup",
  summary: "copy the running store, compacted, to a new directory (store.backup)",
  help: [
    "--socket PATH TARGET",
    "",
    "TARGET must not exist; it becomes a store data directory (data.mdb and its manifest).",
    "The store keeps serving and committing while the copy is made; restore by pointing",
    "data_dir at TARGET (docs/operations.md, Backups).",
  ].join("\n"),
  run(args, io) {
    const { values, positionals } = parseOptions(args, socketOption, { min: 1, max: 1 });
    // The store resolves nothing: the path it is given is the path it writes.
    return callVerb(io, values, "store.backup", { path: resolve(positionals[0]!) });
  },
};

export const verbCommands: readonly Command[] = [
  getCommand,
  putCommand,
  deleteCommand,
  listCommand,
  collectionsCommand,
  branchesCommand,
  historyCommand,
  logCommand,
  changesCommand,
  backupCommand,
];
