// Review in the door (#34), in Debian's Chromium against real skein-idp, skein-store serve and
// door processes: the compare view of a branch, a fast-forward and a three-way merge with
// per-conflict resolutions (checked over the socket), a stale preview refused, a revert, a
// tag created and opened, a reader who previews but cannot merge or revert, markup in keys
// and values kept as text, compare URLs that open from a reload for dotted branch names, and
// the review link an agent's run shows. The compare and merge views are photographed into
// docs/ with SKEIN_DOOR_SCREENSHOTS=1 (else a temp folder).

import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { reviewUrl } from "../../../src/workflow/runs/workspaces.ts";
import { doorInChromium, signIn } from "./support.ts";

const shots =
  process.env.SKEIN_DOOR_SCREENSHOTS === "1"
    ? fileURLToPath(new URL("../../../docs/", import.meta.url))
    : mkdtempSync(join(tmpdir(), "skein-door-shots-"));

const { skip, browser, world } = await doorInChromium();

interface Receipt {
  version: number;
  message?: string;
  parents?: number[];
}

const XSS_KEY = '<img src=x onerror="window.__pwned=1">';
const XSS_VALUE = { html: "<script>window.__pwned=2</script><b>bold</b>" };

/** A collection whose branch `agent` changes 3 records, adds 1 and removes 1 from main's. */
async function reviewed(collection: string) {
  const admin = world.admin;
  await admin.call("collections.create", { collection });
  await admin.put(collection, [
    { key: "a", value: { n: 1 } },
    { key: "b", value: { n: 1 } },
    { key: "c", value: { n: 1, tags: ["x"] } },
    { key: "d", value: "kept" },
    { key: "e", value: "gone soon" },
  ]);
  await admin.call("branches.create", { collection, branch: "agent" });
  await admin.call("document.put", {
    collection,
    branch: "agent",
    records: [
      { key: "a", value: { n: 2 } },
      { key: "b", value: { n: 2, note: "new field" } },
      { key: "f", value: { added: true } },
    ],
    message: "agent: update a and b, add f",
  });
  await admin.call("document.put", {
    collection,
    branch: "agent",
    key: "c",
    value: { n: 1, tags: ["x", "y"] },
    message: "agent: tag c",
  });
  await admin.call("document.delete", {
    collection,
    branch: "agent",
    key: "e",
    message: "agent: drop e",
  });
}

const get = async (collection: string, key: string, branch = "main") =>
  (await world.admin.call("document.get", { collection, branch, key })) as {
    found: boolean;
    value?: unknown;
  };
const head = async (collection: string, branch: string) =>
  (
    (await world.admin.call("history.list", { collection, branch, limit: 1 })) as {
      rows: Receipt[];
    }
  ).rows[0]!;

async function reviewer(name: "alice" | "bob", path: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  page.on("dialog", (dialog) => void dialog.accept());
  await signIn(page, world, name, path);
  return page;
}

/** A collection whose newest version is a mistake, and `name`'s revert panel of it, previewed. */
async function revertPanel(name: "alice" | "bob", collection: string) {
  const admin = world.admin;
  await admin.call("collections.create", { collection });
  await admin.put(collection, [{ key: "keep", value: 1 }]);
  const bad = (await admin.call("document.put", {
    collection,
    key: "oops",
    value: "mistake",
    message: "a mistake",
  })) as Receipt;
  const page = await reviewer(name, `/s/shop/c/${collection}/b/main`);
  await page
    .locator(`tr[data-version="${bad.version}"]`)
    .getByRole("button", { name: "Revert" })
    .click();
  const panel = page.locator(".revert");
  await panel.locator('.outcome[data-outcome="reverted"]').waitFor();
  return { page, panel, bad };
}

describe("review in the door, in Chromium", { skip }, () => {
  test("compare: ahead/behind, the head's commits, 3 changed, 1 added, 1 removed", async () => {
    await reviewed("cmp");
    const page = await reviewer("alice", "/s/shop/c/cmp");
    await page
      .locator('tr[data-branch="agent"]')
      .getByRole("link", { name: "compare with main" })
      .click();
    await page.waitForURL(/\/s\/shop\/c\/cmp\/compare\/main\.\.\.agent$/);
    const counts = page.locator(".counts");
    await counts.waitFor();
    assert.equal(await counts.getAttribute("data-ahead"), "3");
    assert.equal(await counts.getAttribute("data-behind"), "0");
    assert.deepEqual(await page.locator("table.commits td:nth-child(2)").allTextContents(), [
      "agent: drop e",
      "agent: tag c",
      "agent: update a and b, add f",
    ]);
    await page.locator(".change").first().waitFor();
    assert.equal(await page.locator('.change[data-type="modified"]').count(), 3);
    assert.equal(await page.locator('.change[data-type="added"]').count(), 1);
    assert.equal(await page.locator('.change[data-type="removed"]').count(), 1);
    const c = (await page.locator('.change[data-key="c"] .paths').textContent()) ?? "";
    assert.match(c, /\+ \.tags\[1\]:\s*"y"/);
    assert.equal(
      await page.locator(".outcome").getAttribute("data-outcome"),
      "fast_forward",
      "the preview of a branch main never left is a fast-forward",
    );
    await page.screenshot({ path: join(shots, "door-compare.png"), fullPage: true });
    await page.context().close();
  });

  test("preview and merge a fast-forward", async () => {
    await reviewed("ff");
    const agentHead = await head("ff", "agent");
    const page = await reviewer("alice", "/s/shop/c/ff/compare/main...agent");
    await page.locator('.outcome[data-outcome="fast_forward"]').waitFor();
    // A fast-forward writes no version, so it takes no message.
    assert.equal(await page.locator('.merge input[name="message"]').isDisabled(), true);
    await page.getByRole("button", { name: "Merge" }).click();
    const status = page.getByRole("status");
    await status.waitFor();
    assert.match((await status.textContent()) ?? "", /Fast-forwarded main to version v\d+/);
    assert.equal((await head("ff", "main")).version, agentHead.version);
    assert.deepEqual((await get("ff", "f")).value, { added: true });
    await page.locator('.outcome[data-outcome="up_to_date"]').waitFor();
    await page.context().close();
  });

  test("three-way merge: one conflict taken ours, one edited, the result over the socket", async () => {
    await reviewed("tw");
    // main moves too: a and b now conflict with the agent's changes.
    await world.admin.put("tw", [
      { key: "a", value: { n: 10 } },
      { key: "b", value: { n: 10 } },
      { key: "g", value: "main's own" },
    ]);
    const page = await reviewer("alice", "/s/shop/c/tw/compare/main...agent");
    await page.locator('.outcome[data-outcome="merged"]').waitFor();
    const counts = page.locator(".counts");
    assert.equal(await counts.getAttribute("data-behind"), "1");
    assert.equal(await page.locator(".conflict").count(), 2);
    const merge = page.getByRole("button", { name: "Merge" });
    assert.equal(await merge.isDisabled(), true, "conflicts unresolved under fail");
    const a = page.locator('.conflict[data-key="a"]');
    await a.locator('input[value="ours"]').check();
    const b = page.locator('.conflict[data-key="b"]');
    await b.locator('input[value="edit"]').check();
    const area = b.locator('textarea[name="resolution"]');
    await area.fill('{"n": 11, "note": "both');
    await b.locator('[data-code="invalid_json"]').waitFor();
    assert.equal(await merge.isDisabled(), true, "an edit that is not JSON blocks the merge");
    await area.fill('{"n": 11, "note": "both"}');
    await page.locator('input[name="message"]').fill("land the agent's work");
    await page.screenshot({ path: join(shots, "door-merge.png"), fullPage: true });
    await merge.click();
    const status = page.getByRole("status");
    await status.waitFor();
    const merged = /as version v(\d+)/.exec((await status.textContent()) ?? "");
    assert.ok(merged, (await status.textContent()) ?? "");
    // Over the socket: the values, the merge commit and the resolution commit on agent.
    assert.deepEqual((await get("tw", "a")).value, { n: 10 });
    assert.deepEqual((await get("tw", "b")).value, { n: 11, note: "both" });
    assert.deepEqual((await get("tw", "f")).value, { added: true });
    assert.equal((await get("tw", "e")).found, false);
    assert.equal((await get("tw", "g")).value, "main's own");
    const mainHead = await head("tw", "main");
    assert.equal(mainHead.version, Number(merged[1]));
    assert.equal(mainHead.message, "land the agent's work");
    const resolution = await head("tw", "agent");
    assert.match(resolution.message ?? "", /^resolve 2 conflict\(s\) of merging agent into main/);
    assert.deepEqual(mainHead.parents?.[1], resolution.version, "the merge took the resolution");
    assert.deepEqual((await get("tw", "a", "agent")).value, { n: 10 });
    await page.context().close();
  });

  test("a stale preview is refused and refreshed", async () => {
    await reviewed("stale");
    const page = await reviewer("alice", "/s/shop/c/stale/compare/main...agent");
    await page.locator('.outcome[data-outcome="fast_forward"]').waitFor();
    const before = await head("stale", "main");
    // The agent commits after the reviewer's preview.
    await world.admin.call("document.put", {
      collection: "stale",
      branch: "agent",
      key: "late",
      value: "unseen",
      message: "agent: a late change",
    });
    await page.getByRole("button", { name: "Merge" }).click();
    const status = page.getByRole("status");
    await status.waitFor();
    assert.match((await status.textContent()) ?? "", /preview was stale/);
    assert.equal((await head("stale", "main")).version, before.version, "nothing merged");
    await page.locator("table.commits tr td:nth-child(2)", { hasText: "a late change" }).waitFor();
    await page.context().close();
  });

  test("revert a version from the history view", async () => {
    const { page, panel, bad } = await revertPanel("alice", "rv");
    await panel.getByRole("button", { name: "Revert" }).click();
    const status = page.getByRole("status");
    await status.waitFor();
    assert.match(
      (await status.textContent()) ?? "",
      new RegExp(`Reverted v${bad.version} as version v\\d+`),
    );
    assert.equal((await get("rv", "oops")).found, false);
    assert.equal((await get("rv", "keep")).value, 1);
    await page.context().close();
  });

  test("a reader previews a revert and finds it disabled, with the reason", async () => {
    const { page, panel } = await revertPanel("bob", "rr");
    assert.equal(await panel.getByRole("button", { name: "Revert" }).isDisabled(), true);
    assert.match(
      (await panel.locator(".reason").textContent()) ?? "",
      /You may not revert on main: .*\(permission_denied\)/,
    );
    assert.equal((await get("rr", "oops")).value, "mistake");
    await page.context().close();
  });

  test("create a tag and open the documents at it", async () => {
    const admin = world.admin;
    await admin.call("collections.create", { collection: "tg" });
    await admin.put("tg", [{ key: "doc", value: "at the tag" }]);
    const page = await reviewer("alice", "/s/shop/c/tg/tags");
    await page.locator("p.empty", { hasText: "No tags." }).waitFor();
    await page.locator('input[name="tag"]').fill("v1.0");
    await page.getByRole("button", { name: "Create" }).click();
    const row = page.locator('tr[data-tag="v1.0"]');
    await row.waitFor();
    await admin.put("tg", [{ key: "doc", value: "after the tag" }]);
    await row.getByRole("link", { name: "open" }).click();
    await page.waitForURL(/\/b\/main\/docs\?version=v1\.0$/);
    await page.reload();
    await page.locator("td.mono", { hasText: "doc" }).waitFor();
    assert.match((await page.locator("td.mono.muted").first().textContent()) ?? "", /at the tag/);
    await page.context().close();
  });

  test("a reader sees the preview and no enabled merge, with the reason", async () => {
    await reviewed("rd");
    const page = await reviewer("bob", "/s/shop/c/rd/compare/main...agent");
    // The dry run is decided as a read of both branches: bob previews what he may not merge.
    await page.locator('.outcome[data-outcome="fast_forward"]').waitFor();
    const merge = page.getByRole("button", { name: "Merge" });
    assert.equal(await merge.isDisabled(), true);
    assert.match(
      (await page.locator(".merge .reason").textContent()) ?? "",
      /You may not merge into main: .*\(permission_denied\)/,
    );
    assert.equal(await page.locator(".counts").getAttribute("data-ahead"), "3");
    await page.locator('.change[data-key="f"]').waitFor();
    await page.context().close();
  });

  test("markup in keys and values of the diff and the conflicts stays text", async () => {
    const admin = world.admin;
    await admin.call("collections.create", { collection: "xss" });
    await admin.put("xss", [{ key: XSS_KEY, value: "x" }]);
    await admin.call("branches.create", { collection: "xss", branch: "agent" });
    await admin.put("xss", [{ key: XSS_KEY, value: XSS_VALUE }], { branch: "agent" });
    await admin.put("xss", [{ key: XSS_KEY, value: { other: "<i>main</i>" } }]);
    const page = await reviewer("alice", "/s/shop/c/xss/compare/main...agent");
    await page.locator(".conflict").waitFor();
    await page.locator(".change").first().waitFor();
    assert.equal(await page.locator("main img, main script, main b, main i").count(), 0);
    assert.equal(
      await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
      undefined,
    );
    assert.equal(await page.locator(".change h3 .mono").first().textContent(), XSS_KEY);
    assert.match((await page.locator(".conflict").textContent()) ?? "", /<script>window.__pwned=2/);
    await page.context().close();
  });

  test("compare URLs open from a reload for dotted branch names", async () => {
    const admin = world.admin;
    await admin.call("collections.create", { collection: "names" });
    await admin.put("names", [{ key: "k", value: 0 }]);
    const branches = ["a..b", "v1.2", "...", "x."];
    for (const branch of branches) {
      await admin.call("branches.create", { collection: "names", branch });
      await admin.put("names", [{ key: "k", value: branch }], { branch });
    }
    const page = await reviewer("alice", "/s/shop/c/names");
    for (const branch of branches) {
      await page.goto(`${world.origin}/s/shop/c/names`);
      const link = page
        .locator(`tr[data-branch="${branch}"]`)
        .getByRole("link", { name: "compare with main" });
      await link.click();
      await page.locator(".counts").waitFor();
      const url = page.url();
      await page.reload();
      assert.equal(page.url(), url);
      await page.getByRole("heading", { name: `Compare main … ${branch}` }).waitFor();
      assert.equal(await page.locator(".counts").getAttribute("data-ahead"), "1", branch);
      // The changes load after the counts (a page of their own).
      await page.locator('.change[data-key="k"]').waitFor();
      assert.deepEqual(
        await page.locator('.change[data-key="k"] .side pre').allTextContents(),
        ["0", JSON.stringify(branch)],
        branch,
      );
    }
    // The link an agent's run shows (the workflow server writes it) opens the same view.
    for (const branch of branches) {
      await page.goto(
        reviewUrl(
          { collection: "names", branch, base: "main" },
          { origin: world.origin, store: "shop" },
        ),
      );
      await page.getByRole("heading", { name: `Compare main … ${branch}` }).waitFor();
      assert.equal(await page.locator(".counts").getAttribute("data-ahead"), "1", branch);
    }
    // Typed by hand, with plain dots: split at the first "...".
    for (const [typed, base, branch] of [
      ["main...v1.2", "main", "v1.2"],
      ["main...a..b", "main", "a..b"],
      ["a..b...main", "a..b", "main"],
    ] as const) {
      await page.goto(`${world.origin}/s/shop/c/names/compare/${typed}`);
      await page.getByRole("heading", { name: `Compare ${base} … ${branch}` }).waitFor();
      await page.locator(".counts").waitFor();
    }
    await page.context().close();
  });
});
