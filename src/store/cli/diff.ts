/**
 * `skein-store diff COLLECTION FROM TO`: the changes between two refs (two branches, two
 * versions, a tag and a branch…), every page of changes.list, printed for review: `+` added,
 * `-` removed, `~` modified with the fields that changed (`.a.b: old → new`), coloured on a
 * terminal, and a summary line. With `--output json` (or through a pipe) it prints
 * `{from, to, changes}` with every change. `--since-base` diffs from the common ancestor of
 * FROM (a branch) and TO instead: what TO changed since the two parted, the review view of
 * an agent's branch (a branch moved on since is not shown as undoing its own commits).
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

/**
 * The common ancestor of the branch `from` and the ref `to`, as a ref the store can read:
 * a dry-run merge names it, and it is retained on one of the two branches (their records,
 * fork points or history), or else the merge would have been refused.
 */
async function baseRef(
  client: { call(verb: string, args: object): Promise<unknown> },
  collection: string,
  from: string,
  to: string,
): Promise<number | string> {
  const preview = (await client.call("branches.merge", {
    collection,
    from: refArg(to),
    into: from,
    dry_run: true,
  })) as { outcome: string; base: number | null; ours: number; theirs: number };
  // TO is already in FROM: it changed nothing FROM lacks (the diff of TO with itself).
  if (preview.outcome === "up_to_date") return refArg(to)!;
  const base = preview.base!;
  const toBranch = typeof refArg(to) === "number" ? from : to.split("@")[0]!;
  for (const branch of [toBranch, from]) {
    try {
      await client.call("document.list", { collection, version: `${branch}@${base}`, limit: 1 });
      return `${branch}@${base}`;
    } catch (error) {
      if ((error as { code?: string }).code !== "version_not_found") throw error;
    }
  }
  return `${from}@${base}`;
}

export const diffCommand: Command = {
  name: "diff",
  summary: "show the changes between two refs, for review (changes.list)",
  help: "(--socket PATH | --store NAME) COLLECTION FROM TO [--since-base] [--branch B] [--limit N] [--output text|json]\n\nFROM and TO are refs: a branch (its head), BRANCH@VERSION, a tag, or a version number of --branch (main).\n--since-base: what TO changed since it parted from the branch FROM (from their common ancestor).",
  run(args, io: Io) {
    const { values, positionals } = parseOptions(
      args,
      {
        ...socketOption,
        ...branchOption,
        limit: { type: "string" },
        "since-base": { type: "boolean" },
      },
      { min: 3, max: 3 },
    );
    const [collection, from, to] = positionals as [string, string, string];
    const text = textOutput(values, io);
    return withClient(io, values, async (client) => {
      const since =
        values["since-base"] === true ? await baseRef(client, collection, from, to) : null;
      const diff = await readDiff(client, {
        collection,
        branch: values.branch,
        from: since ?? refArg(from),
        to: refArg(to),
        limit: whole(values.limit, "limit"),
      });
      const label = since === null ? from : `base of ${from} and ${to}`;
      if (text) io.out(renderDiff(diff, [label, to], paintFor(io)));
      else printResult(io, values, diff);
      return 0;
    });
  },
};
