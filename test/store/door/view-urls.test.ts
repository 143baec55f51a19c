// Every console view opens from its own URL (#30 item 8): for keys and branch and collection
// names of every legal shape (dots, dot segments, empty segments, %, spaces, control
// characters, unicode, the longest), the link the console makes is followed, the page is
// reloaded from that URL in Chromium, and the view shows the right document or branch.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { doorInChromium, signIn } from "./support.ts";

/** Keys are 1 to 1024 bytes without NUL (store-protocol.md): a table of their shapes. */
const KEYS = [
  "report.md",
  "a.b/c.d",
  "dir/",
  "/lead",
  "a//b",
  "/",
  ".",
  "..",
  "a/./b",
  "a/../b",
  "./x",
  "x/..",
  "...",
  ".hidden",
  "100%",
  "%2e%2E",
  "%2F",
  "with space",
  "tab\there",
  "line\nbreak",
  "naïve/日本語.txt",
  "emoji 🎉.json",
  "q?x=1#frag",
  "back\\slash",
  "plus+sign & amp=1",
  "semi;colon,comma",
  "doc",
  "s/shop/c/x",
  "index.html",
  "console.js",
  `${"k".repeat(1016)}.txt`,
  "ü".repeat(512),
];

/** Branch (and collection) names: 1 to 128 bytes of letters, digits, _, - and ., not . or .. */
const BRANCHES = [
  "v1.2",
  "...",
  ".hidden",
  "a..b",
  "x.",
  "release-1.0_rc.1",
  "docs",
  "doc",
  "query",
  "diff",
  `${"n".repeat(124)}.end`,
];

const COLLECTION = "shapes";
const DOTTED_COLLECTION = "notes.v2";

const { skip, browser, world } = await doorInChromium();

if (skip === false) {
  const admin = world.admin;
  await admin.call("collections.create", { collection: COLLECTION });
  await admin.call("collections.create", { collection: DOTTED_COLLECTION });
  await admin.put(
    COLLECTION,
    KEYS.map((key) => ({ key, value: key })),
  );
  for (const branch of BRANCHES) {
    await admin.call("branches.create", { collection: COLLECTION, branch });
  }
}

/**
 * Follows the console's own link whose text is exactly `text` (a click: the console routes
 * in the page), then reloads the page from the URL it shows. Returns that URL.
 */
async function openAndReload(page: Page, selector: string, text: string): Promise<string> {
  await page.locator(selector).first().waitFor();
  const href = await page.locator(selector).evaluateAll((anchors, text) => {
    const anchor = anchors.find((a) => a.textContent === text) as unknown as
      | { href: string; click(): void }
      | undefined;
    anchor?.click();
    return anchor?.href;
  }, text);
  assert.ok(href !== undefined, `a link ${JSON.stringify(text)}`);
  assert.equal(new URL(href).origin, new URL(page.url()).origin);
  await page.waitForURL(href);
  await page.reload();
  assert.equal(page.url(), href, "the URL survived the reload unchanged");
  return href;
}

/** The document the view shows after its load: its key (heading) and value (editor). */
async function shownDocument(page: Page): Promise<{ key: string | null; value: unknown }> {
  const shown = page.locator('textarea[name="value"], p.empty, [role="alert"]').first();
  await shown.waitFor();
  if ((await shown.evaluate((e) => e.tagName)) !== "TEXTAREA") {
    return { key: null, value: await shown.textContent() };
  }
  return {
    key: await page.locator("h1 .mono").textContent(),
    value: JSON.parse(await shown.inputValue()),
  };
}

describe("door views open from their URLs, in Chromium", { skip }, () => {
  test("every key shape opens its document from the URL", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const docs = `/s/shop/c/${COLLECTION}/b/main/docs`;
    await signIn(page, world, "alice", docs);
    for (const key of KEYS) {
      await page.goto(`${world.origin}${docs}`);
      await openAndReload(page, "td.mono a", key);
      assert.deepEqual(await shownDocument(page), { key, value: key }, JSON.stringify(key));
    }
    await context.close();
  });

  test("every branch name shape opens its history and documents from the URL", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const branches = `/s/shop/c/${COLLECTION}`;
    await signIn(page, world, "alice", branches);
    for (const branch of BRANCHES) {
      await page.goto(`${world.origin}${branches}`);
      const history = await openAndReload(page, "tr[data-branch] td:first-child a", branch);
      await page.getByRole("heading", { name: `History of ${COLLECTION} / ${branch}` }).waitFor();
      // A document of that branch, from its documents view.
      await page.goto(`${history}/docs`);
      await openAndReload(page, "td.mono a", "report.md");
      assert.deepEqual(await shownDocument(page), { key: "report.md", value: "report.md" });
    }
    await context.close();
  });

  test("URLs typed by hand: a dotted key, branch and collection", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, world, "alice", `/s/shop/c/${COLLECTION}/b/main/doc/report.md`);
    assert.deepEqual(await shownDocument(page), { key: "report.md", value: "report.md" });
    await page.goto(`${world.origin}/s/shop/c/${COLLECTION}/b/v1.2`);
    await page.getByRole("heading", { name: `History of ${COLLECTION} / v1.2` }).waitFor();
    await page.goto(`${world.origin}/s/shop/c/${DOTTED_COLLECTION}`);
    await page.locator('tr[data-branch="main"]').waitFor();
    await page.goto(`${world.origin}/s/shop/c/${DOTTED_COLLECTION}/b/main/docs`);
    await page.getByRole("heading", { name: `Documents of ${DOTTED_COLLECTION} / main` }).waitFor();
    await context.close();
  });
});
