/**
 * The review loop on the command line: `merge` (branches.merge), `revert`
 * (branches.revert), `log` (history.list with messages and merge parents) and `tag`
 * (tags.create | list | delete). A merge refused for conflicts prints the conflicts (from a
 * dry run of the same merge) before the refusal line, and exits 1.
 */

import { type Command, type Io, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { branchOption, defined, refArg, signed, signOptions } from "./args.ts";
import { callVerb, printResult, socketOption } from "./call.ts";
import { withClient } from "./connection.ts";
import { receiptLine, table } from "./output.ts";

const mergeOptions = {
  ...socketOption,
  ...signOptions,
  strategy: { type: "string" },
  "dry-run": { type: "boolean" },
} as const;

interface MergeResult {
  readonly outcome: string;
  readonly committed: boolean;
  readonly receipt: Record<string, unknown> | null;
  readonly base: number | null;
  readonly applied: number;
  readonly conflicts: Record<string, unknown>[];
  readonly conflict_count: number;
}

export function renderMerge(result: unknown): string {
  const r = result as MergeResult;
  const lines = [
    `${r.outcome}${r.committed ? "" : " (nothing committed)"}: base ${r.base ?? "none"}, ${r.applied} key(s) from the other side`,
  ];
  if (r.receipt !== null) lines.push(`head: ${receiptLine(r.receipt)}`);
  if (r.conflict_count > 0) {
    lines.push(
      `conflicts (${r.conflict_count}):`,
      table(r.conflicts, ["key", "base", "ours", "theirs"]),
    );
  }
  return lines.join("\n");
}

function strategyOf(text: string | undefined): string | undefined {
  if (text === undefined || text === "fail" || text === "ours" || text === "theirs") return text;
  throw new UsageError("--strategy must be fail, ours or theirs");
}

/** Runs a merge-like verb; a `merge_conflict` refusal is followed by the dry run's conflicts. */
function mergeLike(io: Io, values: Record<string, unknown>, verb: string, args: object) {
  return withClient(io, values, async (client) => {
    try {
      printResult(io, values, await client.call(verb, args), renderMerge);
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError) || error.code !== "merge_conflict") throw error;
      const preview = await client.call(verb, { ...args, dry_run: true });
      printResult(io, values, preview, renderMerge);
      throw error;
    }
  });
}

export const mergeCommand: Command = {
  name: "merge",
  summary: "merge a branch (or any ref) into a branch (branches.merge)",
  help: "(--socket PATH | --store NAME) COLLECTION FROM INTO [--strategy fail|ours|theirs] [--dry-run] [-m MESSAGE] [--author A]\n\nFROM is a ref (a branch, BRANCH@VERSION or a tag); INTO a branch. With --strategy fail (the\ndefault) a conflict commits nothing: the conflicts are printed and the exit status is 1.",
  run(args, io) {
    const { values, positionals } = parseOptions(args, mergeOptions, { min: 3, max: 3 });
    const [collection, from, into] = positionals as [string, string, string];
    return mergeLike(
      io,
      values,
      "branches.merge",
      defined({
        collection,
        from: refArg(from),
        into,
        strategy: strategyOf(values.strategy),
        dry_run: values["dry-run"],
        ...signed(values),
      }),
    );
  },
};

export const revertCommand: Command = {
  name: "revert",
  summary: "commit the inverse of one version's changes (branches.revert)",
  help: "(--socket PATH | --store NAME) COLLECTION REF [--branch B] [--strategy fail|ours|theirs] [--dry-run] [-m MESSAGE] [--author A]",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...mergeOptions, ...branchOption },
      { min: 2, max: 2 },
    );
    return mergeLike(
      io,
      values,
      "branches.revert",
      defined({
        collection: positionals[0],
        branch: values.branch,
        version: refArg(positionals[1]),
        strategy: strategyOf(values.strategy),
        dry_run: values["dry-run"],
        ...signed(values),
      }),
    );
  },
};

export function renderLog(result: unknown): string {
  const page = result as { rows: Record<string, unknown>[]; next: number | null };
  const rows = page.rows.map((r) => ({
    version: r.version,
    time: r.time,
    author: r.author,
    merge: Array.isArray(r.parents) ? r.parents.join("+") : "",
    message: r.message ?? "",
  }));
  const more = page.next === null ? "" : `\n(more: --before ${page.next})`;
  return `${table(rows)}${more}`;
}

export const tagCommand: Command = {
  name: "tag",
  summary: "list, create or delete a collection's tags",
  help: "(--socket PATH | --store NAME) COLLECTION [list | create NAME [REF] [--branch B] [-m MESSAGE] [--author A] | delete NAME]\n\nREF (default: the head of --branch, main) is a version number, a branch, BRANCH@VERSION or a tag.",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...socketOption, ...branchOption, ...signOptions },
      { min: 1, max: 4 },
    );
    const [collection, action = "list", name, ref] = positionals;
    if (action === "list" && name === undefined) {
      return callVerb(io, values, "tags.list", { collection });
    }
    if (action === "create" && name !== undefined) {
      return callVerb(
        io,
        values,
        "tags.create",
        defined({
          collection,
          tag: name,
          branch: values.branch,
          version: refArg(ref),
          ...signed(values),
        }),
      );
    }
    if (action === "delete" && name !== undefined && ref === undefined) {
      return callVerb(io, values, "tags.delete", { collection, tag: name });
    }
    throw new UsageError("expected list, create NAME [REF] or delete NAME");
  },
};

export const versioningCommands: readonly Command[] = [mergeCommand, revertCommand, tagCommand];
