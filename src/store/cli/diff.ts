/**
 * `skein-store diff COLLECTION FROM TO`: the changes between two refs (two branches, two
 * versions, a tag and a branch…), every page of changes.list, printed for review: `+` added,
 * `-` removed, `~` modified with the fields that changed (`.a.b: old → new`), coloured on a
 * terminal, and a summary line. With `--output json` (or through a pipe) it prints
 * `{from, to, changes}` with every change.
 */

import { type Command, type Io, parseOptions } from "../../common/cli.ts";
import { branchOption, defined, refArg, whole } from "./args.ts";
import { printResult, socketOption } from "./call.ts";
import { withClient } from "./connection.ts";
import { cell, type Paint, paintFor, textOutput } from "./output.ts";

interface ChangeRow {
  readonly key: string;
  readonly type: "added" | "removed" | "modified";
  readonly from?: unknown;
  readonly to?: unknown;
}

interface Diff {
  readonly from: number;
  readonly to: number;
  readonly changes: ChangeRow[];
}

/** Field-level differences of two values: `[path, old, new]` (up to 4 levels deep). */
export function fieldChanges(
  a: unknown,
  b: unknown,
  path = "",
  depth = 0,
): [string, unknown, unknown][] {
  const object = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === "object" && !Array.isArray(v);
  if (!object(a) || !object(b) || depth >= 4) {
    return JSON.stringify(a) === JSON.stringify(b) ? [] : [[path === "" ? "." : path, a, b]];
  }
  const out: [string, unknown, unknown][] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    out.push(...fieldChanges(a[key], b[key], `${path}.${key}`, depth + 1));
  }
  return out;
}

export function renderDiff(diff: Diff, labels: [string, string], paint: Paint): string {
  const lines = [
    paint.bold(`diff ${labels[0]} (version ${diff.from}) → ${labels[1]} (version ${diff.to})`),
  ];
  const counts = { added: 0, removed: 0, modified: 0 };
  for (const change of diff.changes) {
    counts[change.type]++;
    if (change.type === "added")
      lines.push(paint.added(`+ ${change.key}  ${cell(change.to, 120)}`));
    else if (change.type === "removed") {
      lines.push(paint.removed(`- ${change.key}  ${cell(change.from, 120)}`));
    } else {
      lines.push(paint.changed(`~ ${change.key}`));
      for (const [path, was, now] of fieldChanges(change.from, change.to)) {
        const gone = was === undefined ? paint.dim("(absent)") : paint.removed(cell(was));
        const came = now === undefined ? paint.dim("(absent)") : paint.added(cell(now));
        lines.push(`    ${path}: ${gone} → ${came}`);
      }
    }
  }
  const total = diff.changes.length;
  lines.push(
    paint.dim(
      `${total} change${total === 1 ? "" : "s"}: ${counts.added} added, ${counts.removed} removed, ${counts.modified} modified`,
    ),
  );
  return lines.join("\n");
}

async function readDiff(
  client: { call(verb: string, args: object): Promise<unknown> },
  args: Record<string, unknown>,
): Promise<Diff> {
  const changes: ChangeRow[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = (await client.call("changes.list", defined({ ...args, cursor }))) as Diff & {
      cursor: string | null;
    };
    changes.push(...page.changes);
    if (page.cursor === null) return { from: page.from, to: page.to, changes };
    cursor = page.cursor;
  }
}

export const diffCommand: Command = {
  name: "diff",
  summary: "show the changes between two refs, for review (changes.list)",
  help: "(--socket PATH | --store NAME) COLLECTION FROM TO [--branch B] [--limit N] [--output text|json]\n\nFROM and TO are refs: a branch (its head), BRANCH@VERSION, a tag, or a version number of --branch (main).",
  run(args, io: Io) {
    const { values, positionals } = parseOptions(
      args,
      { ...socketOption, ...branchOption, limit: { type: "string" } },
      { min: 3, max: 3 },
    );
    const [collection, from, to] = positionals as [string, string, string];
    const text = textOutput(values, io);
    return withClient(io, values, async (client) => {
      const diff = await readDiff(client, {
        collection,
        branch: values.branch,
        from: refArg(from),
        to: refArg(to),
        limit: whole(values.limit, "limit"),
      });
      if (text) io.out(renderDiff(diff, [from, to], paintFor(io)));
      else printResult(io, values, diff);
      return 0;
    });
  },
};
