/**
 * `npm run bench:ui`: the run console's runs list with many runs, in Debian's Chromium
 * (playwright-core) against a real `skein serve` (SQLite). BENCH_UI_RUNS runs (waiting on a
 * signal, so they stay put) are started, then the list is opened: the time to its first
 * rows, the time to page every run in by scrolling (cursor pages of 200), the rows in the
 * page at the end (the virtualised list renders only what is in view), the time a scroll to
 * a random place takes to paint (two animation frames after setting scrollTop) and the page's
 * JS heap. Nothing is asserted.
 *
 * Knobs: BENCH_UI_RUNS (5000).
 */

import { chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_FLAGS } from "../test/support/chromium.ts";
import {
  call,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../test/workflow/support/server.ts";
import { type Figures, knob, percentile, runBench, skipped } from "./harness.ts";
import { chromiumMissing } from "./support/needs.ts";

const N = knob("BENCH_UI_RUNS", 5000, 50);
const PAINTS = knob("BENCH_PAINTS", 100, 10);
const MEASURES = ["console", "src/workflow/ui", "src/workflow/http"];

const missing = chromiumMissing();
if (missing !== undefined) {
  const figures: Figures = skipped(missing);
  await runBench("ui", { measures: MEASURES }, [
    { name: `runs list, ${N} runs`, run: () => figures },
  ]);
  process.exit(0);
}

const dir = await tempDir();
const server = await startServe(await writeConfig(dir.path, '[namespaces]\ndefault = "default"'));
const token = await tokenFor(dir.path, { subject: "bench", namespaces: "*" });
const api = (path: string, body: object) => call(server.url, "POST", path, { token, body });
await api("/workflows/definitions", {
  definition: "name: waiter\nsteps:\n  - { id: w, wait: { signal: go } }\n",
});
for (let i = 0; i < N; i += 50) {
  await Promise.all(
    Array.from({ length: Math.min(50, N - i) }, () => api("/workflows/start", { name: "waiter" })),
  );
}
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });

try {
  await runBench("ui", { measures: MEASURES }, [
    {
      name: `runs list, ${N} runs`,
      async run() {
        const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
        const opened = performance.now();
        await page.goto(`${server.url}/ui/n/default/runs#token=${token}`);
        await page.locator(".vrow").first().waitFor();
        const firstRowsMs = performance.now() - opened;
        const loading = performance.now();
        const loaded = () => page.locator("[data-loaded]").getAttribute("data-loaded");
        while (Number(await loaded()) < N) {
          await page.locator(".vlist").evaluate((el) => {
            el.scrollTop = el.scrollHeight;
          });
          await page.waitForTimeout(20);
        }
        const allLoadedMs = performance.now() - loading;
        const paints = await page.locator(".vlist").evaluate(async (el, count) => {
          // Runs in the page (the project's types have no DOM library).
          const raf = (globalThis as unknown as { requestAnimationFrame: (f: () => void) => void })
            .requestAnimationFrame;
          const frame = () => new Promise<void>((done) => raf(() => done()));
          const samples: number[] = [];
          for (let i = 0; i < count; i++) {
            const t = performance.now();
            el.scrollTop = Math.random() * el.scrollHeight;
            await frame();
            await frame();
            samples.push(performance.now() - t);
          }
          return samples;
        }, PAINTS);
        const rows = await page.locator(".vrow").count();
        const cdp = await page.context().newCDPSession(page);
        const heap = (await cdp.send("Runtime.getHeapUsage")) as { usedSize: number };
        await page.close();
        return {
          first_rows_ms: Math.round(firstRowsMs),
          all_pages_ms: Math.round(allLoadedMs),
          rows_in_dom: rows,
          scroll_paint_p50_ms: Number(percentile(paints, 50).toFixed(1)),
          scroll_paint_p99_ms: Number(percentile(paints, 99).toFixed(1)),
          js_heap_mb: Number((heap.usedSize / 2 ** 20).toFixed(1)),
        };
      },
    },
  ]);
} finally {
  await browser.close();
  await server.stop();
  await dir.remove();
}
