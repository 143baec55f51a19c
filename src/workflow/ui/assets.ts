/**
 * The run console's static files, read once at start-up into memory: everything under
 * `console/ui` (served at `/ui/…`), the stylesheet the console shares with the store's door
 * (`console/common`, at `/ui/common/…`) and the browser modules it imports (Preact, its hooks
 * and htm, at `/ui/vendor/…`) from this package's own dependencies, so nothing is fetched
 * from a CDN and there is no build step. Each file carries a strong ETag (a hash of its
 * bytes): the browser revalidates (`no-cache`) and gets a 304 when nothing changed. A path
 * whose last segment has no dot is a console view and gets `index.html` (the console routes
 * by path, so every view has a shareable URL).
 */

import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
};

/** Where the console is mounted on the HTTP listener. */
export const UI_PREFIX = "/ui";

export interface UiAsset {
  readonly type: string;
  readonly body: Buffer;
  /** A strong validator: the first 128 bits of the bytes' SHA-256, quoted. */
  readonly etag: string;
}

const CONSOLE = fileURLToPath(new URL("../../../console/", import.meta.url));

function asset(type: string, body: Buffer): UiAsset {
  const etag = `"${createHash("sha256").update(body).digest("hex").slice(0, 32)}"`;
  return { type, body, etag };
}

/** The files of one folder (not its subfolders) with a known type, by `prefix/name`. */
async function folder(dir: string, prefix: string, into: Map<string, UiAsset>): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const type = TYPES[extname(entry.name)];
    if (!entry.isFile() || type === undefined) continue;
    into.set(`${prefix}/${entry.name}`, asset(type, await readFile(join(dir, entry.name))));
  }
}

async function vendor(into: Map<string, UiAsset>): Promise<void> {
  const read = (specifier: string) => readFile(fileURLToPath(import.meta.resolve(specifier)));
  const js = TYPES[".mjs"]!;
  // The hooks import "preact" by its bare name and the page has no import map (the CSP
  // allows no inline script), so the name is pointed at the served copy.
  const hooks = (await read("preact/hooks"))
    .toString()
    .replaceAll('from"preact"', `from"${UI_PREFIX}/vendor/preact.mjs"`);
  into.set(`${UI_PREFIX}/vendor/preact.mjs`, asset(js, await read("preact")));
  into.set(`${UI_PREFIX}/vendor/hooks.mjs`, asset(js, Buffer.from(hooks)));
  into.set(`${UI_PREFIX}/vendor/htm.mjs`, asset(js, await read("htm")));
}

export class UiAssets {
  readonly #files: ReadonlyMap<string, UiAsset>;

  private constructor(files: ReadonlyMap<string, UiAsset>) {
    this.#files = files;
  }

  /** Reads every console file now; later requests never touch the disk. */
  static async load(root: string = CONSOLE): Promise<UiAssets> {
    const files = new Map<string, UiAsset>();
    await folder(join(root, "ui"), UI_PREFIX, files);
    await folder(join(root, "common"), `${UI_PREFIX}/common`, files);
    await vendor(files);
    if (!files.has(`${UI_PREFIX}/index.html`)) throw new Error(`no index.html under ${root}ui`);
    return new UiAssets(files);
  }

  /** The asset a request path names, or undefined (404). */
  find(pathname: string): UiAsset | undefined {
    const exact = this.#files.get(pathname);
    if (exact !== undefined) return exact;
    const last = pathname.slice(pathname.lastIndexOf("/") + 1);
    return last.includes(".") ? undefined : this.#files.get(`${UI_PREFIX}/index.html`);
  }
}
