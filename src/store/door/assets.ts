/**
 * The console's static files: everything under the door file's `files` folder, plus the
 * three browser modules the console imports (Preact, its hooks, htm), read once at start-up
 * from this package's own dependencies so nothing is ever fetched from a CDN and there is
 * no build step, and the stylesheet it shares with the workflow server's run console
 * (`console/common/console.css`, served as `/console.css`), so both consoles look alike.
 * The console routes by path, so every view has a shareable URL; those paths get
 * `index.html` (see `isConsoleView`), any other path is a file and a missing file is 404.
 */

import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".ico": "image/x-icon",
};

/** A console file larger than this is not a console file: refused rather than buffered. */
export const ASSET_MAX_BYTES = 4 << 20;

export interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

/** The stylesheet both consoles share (this package's own, like the vendored modules). */
const SHARED_CSS = fileURLToPath(new URL("../../../console/common/console.css", import.meta.url));

/** The vendored modules, keyed by the path the console imports them from. */
async function vendorModules(): Promise<Map<string, Asset>> {
  const read = (specifier: string) => readFile(fileURLToPath(import.meta.resolve(specifier)));
  const js = TYPES[".mjs"]!;
  // Preact's hooks import "preact" by its bare name; the browser has no import map (the CSP
  // allows no inline script), so the name is pointed at the served copy.
  const hooks = (await read("preact/hooks"))
    .toString()
    .replaceAll('from"preact"', 'from"/vendor/preact.mjs"');
  return new Map([
    ["/vendor/preact.mjs", { type: js, body: await read("preact") }],
    ["/vendor/hooks.mjs", { type: js, body: Buffer.from(hooks) }],
    ["/vendor/htm.mjs", { type: js, body: await read("htm") }],
    ["/console.css", { type: TYPES[".css"]!, body: await readFile(SHARED_CSS) }],
  ]);
}

/**
 * True when a path is a view of the console rather than a file. Everything under `/s/` is a
 * view, whatever its last segment: store keys and branch names may carry dots (`report.md`,
 * `v1.2`), so a dot cannot tell a file there. Elsewhere (`/`, `/signed-out`) a last segment
 * without a dot is a view; the console's own files live outside `/s/`.
 */
export function isConsoleView(pathname: string): boolean {
  if (pathname === "/s" || pathname.startsWith("/s/")) return true;
  return !pathname.slice(pathname.lastIndexOf("/") + 1).includes(".");
}

export class ConsoleAssets {
  readonly #root: string;
  readonly #vendor: Map<string, Asset>;

  private constructor(root: string, vendor: Map<string, Asset>) {
    this.#root = root;
    this.#vendor = vendor;
  }

  static async load(root: string): Promise<ConsoleAssets> {
    return new ConsoleAssets(root, await vendorModules());
  }

  /** The asset for a request path, or undefined (404). */
  async find(pathname: string): Promise<Asset | undefined> {
    const vendored = this.#vendor.get(pathname);
    if (vendored !== undefined) return vendored;
    const file = isConsoleView(pathname) ? "/index.html" : pathname;
    let decoded: string;
    try {
      decoded = decodeURIComponent(file);
    } catch {
      return undefined;
    }
    const path = normalize(join(this.#root, decoded));
    if (!path.startsWith(this.#root + sep) || decoded.includes("\0")) return undefined;
    try {
      const info = await stat(path);
      if (!info.isFile() || info.size > ASSET_MAX_BYTES) return undefined;
      return {
        type: TYPES[extname(path)] ?? "application/octet-stream",
        body: await readFile(path),
      };
    } catch {
      return undefined;
    }
  }
}
