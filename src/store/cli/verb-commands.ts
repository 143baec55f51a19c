/**
 * Client subcommands for the common verbs (`get`, `put`, `delete`, `list`, `collections`,
 * `branches`, `history`, `changes`): positional arguments and options mapped onto one
 * verb's arguments, then the same call-and-print as `skein-store call`. The one-verb
 * commands are rows of a table (name, verb, usage, options, how the arguments are built);
 * `collections` and `branches`, which pick their verb by an action word, are written out.
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { callVerb, parseJsonArgument, socketOption } from "./call.ts";

type StringOptions = Readonly<Record<string, { readonly type: "string" }>>;
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
  /** The verb's arguments; undefined ones are left out. */
  args(values: Values<O>, positionals: readonly string[]): Record<string, unknown>;
}

function verbCommand<const O extends StringOptions>(row: VerbRow<O>): Command {
  return {
    name: row.name,
    summary: `${row.summary} (${row.verb})`,
    help: row.help,
    run(args, io) {
      const { values, positionals } = parseOptions(
        args,
        { ...socketOption, ...row.options },
        row.positionals,
      );
      const verbArgs = row.args(values as Values<O>, positionals);
      return callVerb(io, values, row.verb, defined(verbArgs));
    },
  };
}

const branchOption = { branch: { type: "string" } } as const;

function whole(text: string | undefined, option: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n))
    throw new UsageError(`--${option} must be a whole number`);
  return n;
}

function defined(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
}

export const getCommand = verbCommand({
  name: "get",
  verb: "document.get",
  summary: "print a record",
  help: "--socket PATH COLLECTION KEY [--branch B] [--version V]",
  options: { ...branchOption, version: { type: "string" } },
  positionals: { min: 2, max: 2 },
  args: (values, [collection, key]) => ({
    collection,
    key,
    branch: values.branch,
    version: whole(values.version, "version"),
  }),
});

export const putCommand = verbCommand({
  name: "put",
  verb: "document.put",
  summary: "write a record and print the receipt",
  help: "--socket PATH COLLECTION KEY JSON [--branch B]",
  options: branchOption,
  positionals: { min: 3, max: 3 },
  args: (values, [collection, key, json]) => ({
    collection,
    key,
    value: parseJsonArgument(json!, "the value"),
    branch: values.branch,
  }),
});

export const deleteCommand = verbCommand({
  name: "delete",
  verb: "document.delete",
  summary: "delete records and print the receipt",
  help: "--socket PATH COLLECTION KEY... [--branch B]",
  options: branchOption,
  positionals: { min: 2 },
  args: (values, [collection, ...keys]) => ({ collection, keys, branch: values.branch }),
});

export const listCommand = verbCommand({
  name: "list",
  verb: "document.list",
  summary: "print a page of records",
  help: "--socket PATH COLLECTION [--branch B] [--version V] [--prefix P] [--after K] [--limit N]",
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
    version: whole(values.version, "version"),
    prefix: values.prefix,
    after: values.after,
    limit: whole(values.limit, "limit"),
  }),
});

export const historyCommand = verbCommand({
  name: "history",
  verb: "history.list",
  summary: "list a branch's retained versions",
  help: "--socket PATH COLLECTION [--branch B] [--before V] [--limit N]",
  options: { ...branchOption, before: { type: "string" }, limit: { type: "string" } },
  positionals: { min: 1, max: 1 },
  args: (values, [collection]) => ({
    collection,
    branch: values.branch,
    before: whole(values.before, "before"),
    limit: whole(values.limit, "limit"),
  }),
});

export const changesCommand = verbCommand({
  name: "changes",
  verb: "changes.list",
  summary: "list changes between two versions",
  help: "--socket PATH COLLECTION --from V [--to V] [--branch B] [--from-branch B] [--limit N] [--cursor C]",
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
    if (values.from === undefined) throw new UsageError("--from VERSION is required");
    return {
      collection,
      branch: values.branch,
      from_branch: values["from-branch"],
      from: whole(values.from, "from"),
      to: whole(values.to, "to"),
      limit: whole(values.limit, "limit"),
      cursor: values.cursor,
    };
  },
});
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
          from_version: whole(values.version, "version"),
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
  changesCommand,
];
