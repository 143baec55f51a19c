/**
 * Client subcommands for the common verbs (`get`, `put`, `delete`, `list`, `collections`,
 * `branches`, `history`, `log`, `changes`, `backup`): positional arguments and options mapped
 * onto one verb's arguments, then the same call-and-print as `skein-store call`. Wherever a
 * version is taken, a ref is too (a number, a branch, BRANCH@VERSION or a tag). The one-verb
 * commands are rows of a table (name, verb, usage, options, how the arguments are built, how
 * the result reads as text), so a new one is a row, not another copy of parse-build-call;
 * `collections` and `branches`, which pick their verb by an action word, are written out.
 */

import { resolve } from "node:path";
import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { branchOption, defined, readValue, refArg, signed, signOptions, whole } from "./args.ts";
import { callVerb, socketOption } from "./call.ts";
import { renderLog } from "./versioning-commands.ts";

type StringOptions = Readonly<Record<string, { readonly type: "string"; readonly short?: string }>>;
type Values<O extends StringOptions> = { [K in keyof O]?: string | undefined };

/** One row of the table: a command that calls exactly one verb. */
interface VerbRow<O extends StringOptions> {
  readonly name: string;
  readonly verb: string;
  /** What it does; the verb is appended in parentheses. */
  readonly summary: string;
  readonly help: string;
  /** Its options besides `--socket`, `--timeout-ms` and `--pass-file`. */
  readonly options: O;
  readonly positionals: { readonly min: number; readonly max?: number };
  /** The verb's arguments (undefined ones are left out); async where the value is read. */
  args(
    values: Values<O>,
    positionals: readonly string[],
  ): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** The result as text, where the plain rendering does not read well. */
  readonly text?: (result: unknown) => string;
}

function verbCommand<const O extends StringOptions>(row: VerbRow<O>): Command {
  return {
    name: row.name,
    summary: `${row.summary} (${row.verb})`,
    help: row.help,
    async run(args, io) {
      const { values, positionals } = parseOptions(
        args,
        { ...socketOption, ...row.options },
        row.positionals,
      );
      const verbArgs = await row.args(values as Values<O>, positionals);
      return callVerb(io, values, row.verb, defined(verbArgs), row.text);
    },
  };
}

export const getCommand = verbCommand({
  name: "get",
  verb: "document.get",
  summary: "print a record",
  help: "(--socket PATH | --store NAME) COLLECTION KEY [--branch B] [--version V]",
  options: { ...branchOption, version: { type: "string" } },
  positionals: { min: 2, max: 2 },
  args: (values, [collection, key]) => ({
    collection,
    key,
    branch: values.branch,
    version: refArg(values.version),
  }),
});

export const putCommand = verbCommand({
  name: "put",
  verb: "document.put",
  summary: "write a record and print the receipt",
  help: "(--socket PATH | --store NAME) COLLECTION KEY (JSON | - | --value-file FILE) [--branch B] [--author A] [-m MESSAGE]\n\n  -             read the JSON value from stdin\n  --value-file  read the JSON value from FILE",
  options: { ...branchOption, ...signOptions, "value-file": { type: "string" } },
  positionals: { min: 2, max: 3 },
  args: async (values, [collection, key, inline]) => ({
    collection,
    key,
    value: await readValue(inline, values["value-file"]),
    branch: values.branch,
    ...signed(values),
  }),
});

export const deleteCommand = verbCommand({
  name: "delete",
  verb: "document.delete",
  summary: "delete records and print the receipt",
  help: "(--socket PATH | --store NAME) COLLECTION KEY... [--branch B] [--author A] [-m MESSAGE]",
  options: { ...branchOption, ...signOptions },
  positionals: { min: 2 },
  args: (values, [collection, ...keys]) => ({
    collection,
    keys,
    branch: values.branch,
    ...signed(values),
  }),
});

export const listCommand = verbCommand({
  name: "list",
  verb: "document.list",
  summary: "print a page of records",
  help: "(--socket PATH | --store NAME) COLLECTION [--branch B] [--version V] [--prefix P] [--after K] [--limit N]",
  options: {
    ...branchOption,
    version: { type: "string" },
    prefix: { type: "string" },
    after: { type: "string" },
    limit: { type: "string" },
  },
  positionals: { min: 1, max: 1 },
  args: (values, [collection]) => ({
    collection,
    branch: values.branch,
    version: refArg(values.version),
    prefix: values.prefix,
    after: values.after,
    limit: whole(values.limit, "limit"),
  }),
});

export const historyCommand = verbCommand({
  name: "history",
  verb: "history.list",
  summary: "list a branch's retained versions",
  help: "(--socket PATH | --store NAME) COLLECTION [--branch B] [--before REF] [--limit N]\n\nREF: a version number (a page's next), a branch (its head), BRANCH@VERSION or a tag;\nthe versions listed are the branch's older than it.",
  options: { ...branchOption, before: { type: "string" }, limit: { type: "string" } },
  positionals: { min: 1, max: 1 },
  args: (values, [collection]) => ({
    collection,
    branch: values.branch,
    before: refArg(values.before),
    limit: whole(values.limit, "limit"),
  }),
  text: renderLog,
});

/** `log`: history under the name reviewers reach for, as a table on a terminal. */
export const logCommand: Command = {
  ...historyCommand,
  name: "log",
  summary: "a branch's versions with authors, messages and merges (history.list)",
};

export const changesCommand = verbCommand({
  name: "changes",
  verb: "changes.list",
  summary: "list changes between two versions",
  help: "(--socket PATH | --store NAME) COLLECTION --from REF [--to REF] [--branch B] [--from-branch B] [--limit N] [--cursor C]\n\nREF: a version number, a branch (its head), BRANCH@VERSION or a tag.",
  options: {
    ...branchOption,
    from: { type: "string" },
    to: { type: "string" },
    "from-branch": { type: "string" },
    limit: { type: "string" },
    cursor: { type: "string" },
  },
  positionals: { min: 1, max: 1 },
  args: (values, [collection]) => {
    if (values.from === undefined) throw new UsageError("--from REF is required");
    return {
      collection,
      branch: values.branch,
      from_branch: values["from-branch"],
      from: refArg(values.from),
      to: refArg(values.to),
      limit: whole(values.limit, "limit"),
      cursor: values.cursor,
    };
  },
});

export const backupCommand = verbCommand({
  name: "backup",
  verb: "store.backup",
  summary: "copy the running store, compacted, to a new directory",
  help: [
    "--socket PATH TARGET",
    "",
    "TARGET must not exist; it becomes a store data directory (data.mdb and its manifest).",
    "The store keeps serving and committing while the copy is made; restore by pointing",
    "data_dir at TARGET (docs/operations.md, Backups).",
  ].join("\n"),
  options: {},
  positionals: { min: 1, max: 1 },
  // The store resolves nothing: the path it is given is the path it writes.
  args: (_values, [target]) => ({ path: resolve(target!) }),
});

export const collectionsCommand: Command = {
  name: "collections",
  summary: "list, create or delete collections",
  help: "(--socket PATH | --store NAME) [list | create NAME | delete NAME]",
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
  help: "(--socket PATH | --store NAME) COLLECTION [list | create NAME [--from BRANCH] [--version V] | delete NAME]",
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
