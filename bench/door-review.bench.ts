/**
 * `npm run bench:door-review`: the door's compare view of a branch with many changes, in
 * Debian's Chromium (playwright-core) against real skein-idp, skein-store serve and door
 * processes (the door tests' world). BENCH_DOOR_CHANGES records are changed on a branch in
 * one commit; the compare view is opened: the time from navigation to its first page of
 * changes on screen (sign-in done before), then the time each "Next →" takes to show the
 * next page, over every page. The issue's goal is under 2 s a page. Nothing is asserted.
 *
 * Knobs: BENCH_DOOR_CHANGES (2000).
 */

import { test } from "node:test";
import { signIn } from "../test/store/door/support.ts";
import { type Figures, knob, percentile, runBench, skipped } from "./harness.ts";
import { chromiumMissing } from "./support/needs.ts";

const N = knob("BENCH_DOOR_CHANGES", 2000, 150);
const MEASURES = ["console/door", "src/store/door", "src/store/engine/changes.ts"];
/** The compare view's page (console/door/compare.js PAGE). */
const PAGE = 100;

const missing = chromiumMissing();
const figures = async (): Promise<Figures> => {
  if (missing !== undefined) return skipped(missing);
  // The door world registers its cleanup with node:test's after(), so this runs in a test
  // (below): its processes are stopped when the test ends, and the bench exits.
  const { doorInChromium } = await import("../test/store/door/support.ts");
  const { browser, world } = await doorInChromium();
  const admin = world.admin;
  await admin.call("collections.create", { collection: "bench" });
  const records = (value: (i: number) => unknown) =>
    Array.from({ length: N }, (_, i) => ({
      key: `rec/${String(i).padStart(6, "0")}`,
      value: value(i),
    }));
  await admin.put(
    "bench",
    records((i) => ({ n: i, status: "draft", tags: ["a"] })),
  );
  await admin.call("branches.create", { collection: "bench", branch: "agent" });
  await admin.put(
    "bench",
    records((i) => ({ n: i, status: "ready", tags: ["a", "b"] })),
    {
      branch: "agent",
    },
  );
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(page, world, "alice", "/s/shop/c/bench");
  const opened = performance.now();
  await page.goto(`${world.origin}/s/shop/c/bench/compare/main...agent`);
  await page
    .locator(".change")
    .nth(Math.min(PAGE, N) - 1)
    .waitFor();
  const firstPageMs = performance.now() - opened;
  const nextMs: number[] = [];
  for (let shown = PAGE; shown < N; shown += PAGE) {
    // Rows come in (shard, key) order, so the page is known by the pager's range.
    const t = performance.now();
    await page.getByRole("button", { name: "Next →" }).click();
    await page.locator(".pager .muted", { hasText: `changes ${shown + 1}–` }).waitFor();
    await page
      .locator(".change")
      .nth(Math.min(PAGE, N - shown) - 1)
      .waitFor();
    nextMs.push(performance.now() - t);
  }
  await browser.close();
  return {
    changes: N,
    first_page_ms: Math.round(firstPageMs),
    next_page_p50_ms: Math.round(percentile(nextMs, 50)),
    next_page_max_ms: Math.round(Math.max(...nextMs)),
    pages: nextMs.length + 1,
  };
};

test("bench:door-review", async () => {
  await runBench("door-review", { measures: MEASURES }, [
    { name: `compare view, ${N} changes`, run: figures },
  ]);
});
