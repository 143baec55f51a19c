/**
 * Reads the code column of a table in docs/: the error catalogues are checked against their
 * doc tables both ways (every code documented, every documented code declared), so a table is
 * found by the heading above it and its codes are the first backticked word of each row.
 */

import { readFileSync } from "node:fs";

const root = new URL("../../", import.meta.url);

/** The codes in the first column of the first table under `heading` in `doc` (docs/…). */
export function documentedCodes(doc: string, heading: string): string[] {
  const lines = readFileSync(new URL(doc, root), "utf8").split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`${doc} has no heading ${JSON.stringify(heading)}`);
  const codes: string[] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("#")) break;
    if (!line.startsWith("|")) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const first = line.split("|")[1] ?? "";
    const code = /`([a-z][a-z0-9_]*)`/.exec(first)?.[1];
    if (code !== undefined) codes.push(code);
  }
  if (codes.length === 0) throw new Error(`${doc}: no table of codes under ${heading}`);
  return codes;
}

/** The row of `code` in that table, for checks of its other columns. */
export function documentedRow(doc: string, heading: string, code: string): string[] | undefined {
  const lines = readFileSync(new URL(doc, root), "utf8").split("\n");
  const start = lines.indexOf(heading);
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("#")) break;
    const cells = line.split("|").map((cell) => cell.trim());
    if (cells[1]?.startsWith(`\`${code}\``)) return cells.slice(1, -1);
  }
  return undefined;
}
