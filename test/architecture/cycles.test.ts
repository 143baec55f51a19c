/**
 * No import circles in src/: a module and the modules it imports (type imports included,
 * since a circle of types is the same knot in the design) form a graph without cycles.
 * When two modules need each other, what both need moves into a module of its own (as
 * engine/inbox.ts and embed/embedder.ts did).
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** Relative import and re-export specifiers of a module's text. */
export function relativeImports(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gms)) {
    out.push(match[1]!);
  }
  return out;
}

/** The name imports.test.ts gives its probe files. */
const PROBE_PREFIX = "zz-import-probe-";

function graph(root: string): Map<string, string[]> {
  const modules = new Map<string, string[]>();
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    // imports.test.ts places short-lived probe files in src/ while this file may be reading it.
    if (entry.name.startsWith(PROBE_PREFIX)) continue;
    const path = join(entry.parentPath, entry.name);
    const deps = relativeImports(readFileSync(path, "utf8")).map((spec) =>
      normalize(join(dirname(path), spec)),
    );
    modules.set(path, deps);
  }
  return modules;
}

/** Every cycle's members (strongly connected components larger than one module). */
export function cycles(modules: Map<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of modules.get(v) ?? []) {
      if (!modules.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of modules.keys()) if (!index.has(v)) visit(v);
  return found;
}

test("the cycle finder finds a circle of two and of three, and none in a chain", () => {
  const two = new Map([
    ["a", ["b"]],
    ["b", ["a"]],
  ]);
  const three = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a"]],
    ["d", ["a"]],
  ]);
  const chain = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", []],
  ]);
  assert.deepEqual(cycles(two), [["a", "b"]]);
  assert.deepEqual(cycles(three), [["a", "b", "c"]]);
  assert.deepEqual(cycles(chain), []);
});

test("import and export specifiers are read, type imports and multi-line lists included", () => {
  const text = [
    'import { a } from "./a.ts";',
    'import type { B } from "../b.ts";',
    "import {",
    "  c,",
    "  d,",
    '} from "./c.ts";',
    'export { e } from "./e.ts";',
    'import { readFile } from "node:fs";',
  ].join("\n");
  assert.deepEqual(relativeImports(text), ["./a.ts", "../b.ts", "./c.ts", "./e.ts"]);
});

test("src/ has no import circles", () => {
  const found = cycles(graph(SRC)).map((c) => c.map((p) => p.slice(SRC.length)));
  assert.deepEqual(found, [], `import circles: ${JSON.stringify(found)}`);
});
