// The run console in a real browser: Debian's Chromium (playwright-core) against a real
// `skein serve`, real module and agent workers and the scripted model. Find a run among
// hundreds (cursor paging, a virtualised list, newest first and turned to oldest first),
// open its timeline and see the retry; cancel a run tree and see its descendants cancelled;
// inject a message into a live agent attempt and approve its tool call, watching the
// transcript; a namespace-scoped sign-in link that cannot see another namespace. With SKEIN_UI_SCREENSHOTS=1 the views are photographed into
// docs/ (otherwise into a temp folder, so a test run leaves the work tree clean).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { chromiumPresent, launchChromium } from "../../support/chromium.ts";
import { until } from "../../support/until.ts";
import { SKEIN_BIN } from "../support/server.ts";
import { type UiWorld, uiWorld } from "./support.ts";

const present = chromiumPresent();
const shots =
  process.env.SKEIN_UI_SCREENSHOTS === "1"
    ? fileURLToPath(new URL("../../../docs/", import.meta.url))
    : mkdtempSync(join(tmpdir(), "skein-ui-shots-"));
/** Runs beyond one page of the list (200), so the list pages by cursor as it scrolls. */
const FILLER_RUNS = 450;
/** Signals sent to one run: a history longer than one page of the console's reads (1000). */
const LONG_RUN_TICKS = 1_200;

// Started at the top level: helpers register their cleanup with after().
const skip = present ? false : "/usr/bin/chromium is not installed";
const browser = present ? await launchChromium() : (undefined as unknown as Browser);
const world = present ? await uiWorld() : (undefined as unknown as UiWorld);

async function open(path: string, token = world.token): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  // A script error in the console fails the test that opened it.
  page.on("pageerror", (error) => {
    throw error;
  });
  await page.goto(`${world.url}${path}#token=${token}`);
  return page;
}

/** `skein ui` for this world's server; the link it prints. */
function signInLink(args: string[]): string {
  const r = spawnSync(
    process.execPath,
    [SKEIN_BIN, "ui", "--config", world.configFile, "--server", world.url, ...args],
    { encoding: "utf8", env: { ...process.env, SKEIN_LOG_LEVEL: "warn" } },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

describe("run console in Chromium", { skip }, () => {
  test("find a run among hundreds, open its timeline and see the retry", async () => {
    const retried = await world.start("retrying", { n: 21 });
    const failed = await world.start("failing");
    await world.until(retried, "completed", (d) => d.run.status === "Completed");
    await world.until(failed, "failed", (d) => d.run.status === "Failed");
    for (let i = 0; i < FILLER_RUNS; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, FILLER_RUNS - i) }, () => world.start("waiter")),
      );
    }
    // The list is newest first: its first row is the run the server lists first newest
    // first (the filler started last), and the retried run, started before every filler, is
    // at the bottom.
    const newest = await world.api("/workflows/list", {
      namespace: "default",
      order: "newest",
      limit: 1,
    });
    const latest = newest.body.runs[0].workflow_id as string;
    assert.notEqual(latest, retried);
    const page = await open("/ui/");
    await page.locator('tr[data-namespace="default"] a', { hasText: "default" }).click();
    await page.locator(`.vrow[data-workflow-id="${latest}"]`).waitFor();
    assert.equal(await page.locator(".vrow").first().getAttribute("data-workflow-id"), latest);
    assert.equal(await page.locator("button.sort").getAttribute("data-order"), "newest");
    await page.screenshot({ path: join(shots, "ui-runs.png") });
    // Scrolling to the end fetches the next pages; only the rows in view are in the page.
    const list = page.locator(".vlist");
    await until("every run loaded by scrolling", async () => {
      await list.evaluate((el) => {
        el.scrollTop = el.scrollHeight;
      });
      const loaded = Number(await page.locator("[data-loaded]").getAttribute("data-loaded"));
      return loaded >= FILLER_RUNS + 2 ? loaded : undefined;
    });
    // The last page may land below the view that asked for it: scroll down to its rows.
    await until("the retried run's row at the bottom", async () => {
      await list.evaluate((el) => {
        el.scrollTop = el.scrollHeight;
      });
      return (await page.locator(`.vrow[data-workflow-id="${retried}"]`).count()) > 0;
    });
    const rendered = await page.locator(".vrow").count();
    assert.ok(rendered < 80, `${rendered} rows rendered for ${FILLER_RUNS + 2} runs`);
    // The Started header turns the order around: oldest first, the retried run near the top.
    await page.locator("button.sort").click();
    await page.waitForURL(/order=oldest/);
    await page.locator('button.sort[data-order="oldest"]').waitFor();
    // The two runs started before the fillers come first (in either order: they may share a
    // millisecond, and then their run ids decide).
    await until("the oldest runs at the top", async () => {
      const top = await page.locator(".vrow").first().getAttribute("data-workflow-id");
      return top === retried || top === failed ? top : undefined;
    });
    await page.locator(`.vrow[data-workflow-id="${retried}"]`).waitFor();
    // Filter by status (only the retried run has completed), then open it; the order stays.
    await page.locator('select[name="status"]').selectOption("Completed");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/status=Completed&order=oldest/);
    const row = page.locator(`.vrow[data-workflow-id="${retried}"]`);
    await row.waitFor();
    await until(
      "only the completed run listed",
      async () => (await page.locator(".vrow").count()) === 1,
    );
    await row.getByRole("link").click();
    // The timeline: attempt 1 failed (the fixture's first attempts fail), attempt 2 is a retry.
    const activity = page.locator('li.activity[data-step="double"]');
    await activity.locator('li.attempt[data-attempt="2"][data-outcome="completed"]').waitFor();
    const first = activity.locator('li.attempt[data-attempt="1"]');
    assert.equal(await first.getAttribute("data-outcome"), "failed");
    assert.match((await first.textContent()) ?? "", /flaky: first attempts always fail/);
    assert.match((await activity.textContent()) ?? "", /retry/);
    await page.locator('[data-run-status="Completed"]').waitFor();
    assert.match((await page.locator("pre[data-output]").textContent()) ?? "", /"n": 42/);
    await page.locator('li[data-event="RunCompleted"]').waitFor();
    assert.match((await page.locator("li.timer").textContent()) ?? "", /fired after/);
    await page.screenshot({ path: join(shots, "ui-run.png"), fullPage: true });
    // Filter by definition name: only the failed run, found among the waiting ones.
    await page.goto(`${world.url}/ui/n/default/runs`);
    const option = page.locator('select[name="definition"] option', { hasText: /^failing$/ });
    await option.waitFor({ state: "attached" });
    await page.locator('select[name="definition"]').selectOption("failing");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/definition=failing/);
    await page.locator(`.vrow[data-workflow-id="${failed}"][data-status="Failed"]`).waitFor();
    await until(
      "only the failing run listed",
      async () => (await page.locator(".vrow").count()) === 1,
    );
    assert.match((await page.locator(".vrow").textContent()) ?? "", /failing/);
    // Filter by start time (kept in the URL as RFC 3339): nothing starts in the far future.
    const future = "2999-01-01T00:00:00.000Z";
    await page.goto(`${world.url}/ui/n/default/runs?definition=failing&before=${future}`);
    await page.locator(`.vrow[data-workflow-id="${failed}"]`).waitFor();
    await page.goto(`${world.url}/ui/n/default/runs?after=${future}`);
    await page.locator("p.empty", { hasText: "No runs." }).waitFor();
    await page.context().close();
  });

  test("cancel a run tree: the confirmation names the descendants, which end cancelled", async () => {
    const root = await world.start("tree", { n: 1 });
    // The grandchild's activity is held by the module worker: the whole tree is live.
    const leaf = await until("the tree's leaf activity to run", async () => {
      const runs = await world.api("/workflows/list", {
        namespace: "default",
        status: "Running",
        limit: 1000,
      });
      for (const run of runs.body.runs) {
        const d = await world.api("/workflows/describe", { workflow_id: run.workflow_id });
        if (
          d.body.pending_activities.some(
            (p: { state: string; step_id: string }) =>
              p.step_id === "hold" && p.state === "running",
          )
        ) {
          return run.workflow_id as string;
        }
      }
      return undefined;
    });
    const page = await open(`/ui/n/default/runs/${root}`);
    const child = page.locator("li.child").first();
    await child.waitFor();
    await page.getByRole("button", { name: "Cancel…" }).click();
    const dialog = page.getByRole("dialog", { name: "Cancel this run?" });
    await dialog.locator('ul.descendants[data-count="2"]').waitFor();
    await dialog.locator(`li[data-descendant="${leaf}"]`).waitFor();
    await dialog.getByRole("button", { name: "Cancel run" }).click();
    await page.locator('[role="status"][data-control="cancel"]').waitFor();
    await page.locator('[data-run-status="Cancelled"]').waitFor();
    // Open the tree: the child and the grandchild are Cancelled too.
    await child.locator("button.toggle").first().click();
    await page.locator('li.child[data-status="Cancelled"]').first().waitFor();
    const grandchild = page.locator(`li.child[data-child="${leaf}"]`);
    await grandchild.waitFor();
    await until("the grandchild shown cancelled", async () =>
      (await grandchild.getAttribute("data-status")) === "Cancelled" ? true : undefined,
    );
    const d = await world.api("/workflows/describe", { workflow_id: leaf });
    assert.equal(d.body.run.status, "Cancelled");
    await page.screenshot({ path: join(shots, "ui-tree.png"), fullPage: true });
    await page.context().close();
  });

  test("inject a message into a live agent attempt and approve its tool call", async () => {
    world.model.push(
      { tool_calls: [{ id: "call-1", name: "lookup", arguments: '{"word":"skein"}' }] },
      { content: "A skein is a loosely coiled length of yarn." },
    );
    const id = await world.start("ask", { q: "What is a skein?" });
    const page = await open(`/ui/n/default/runs/${id}`);
    await page.getByRole("link", { name: "Open transcript" }).click();
    const transcript = page.locator("ol.transcript");
    await transcript.locator('li[data-type="approval"]', { hasText: "pending" }).waitFor();
    // Live over the transcript stream (not the fallback read).
    await page.locator('[data-live="stream"]').waitFor();
    await page.getByLabel("Message").fill("Answer in one sentence.");
    await page.getByRole("button", { name: "Inject" }).click();
    await page
      .locator('ul.outcomes li[data-outcome="Applied"]', { hasText: "InjectMessage" })
      .waitFor();
    // The control appears in the transcript live, with its subject.
    const control = transcript.locator('li[data-type="control"]', {
      hasText: "Answer in one sentence.",
    });
    await control.waitFor();
    assert.match((await control.textContent()) ?? "", /by operator/);
    await page.screenshot({ path: join(shots, "ui-attempt.png"), fullPage: true });
    // A new budget and a pause and resume, each applied and recorded with its subject.
    await page.getByLabel("max turns").fill("9");
    await page.getByRole("button", { name: "Update budget" }).click();
    await page
      .locator('ul.outcomes li[data-outcome="Applied"]', { hasText: "UpdateBudget" })
      .waitFor();
    await transcript.locator('li[data-type="control"]', { hasText: "max_turns 9" }).waitFor();
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    await page.locator('ul.outcomes li[data-outcome="Applied"]', { hasText: "Pause" }).waitFor();
    await page.getByRole("button", { name: "Resume", exact: true }).click();
    await page.locator('ul.outcomes li[data-outcome="Applied"]', { hasText: "Resume" }).waitFor();
    await transcript
      .locator('li[data-type="control"]', { hasText: "PauseResume: resume" })
      .waitFor();
    await page
      .locator('.approval-call[data-call-id="call-1"]')
      .getByRole("button", { name: "Approve" })
      .click();
    await page
      .locator('ul.outcomes li[data-outcome="Applied"]', { hasText: "Approve call-1" })
      .waitFor();
    await transcript.locator('li[data-type="approval"]', { hasText: "approved" }).waitFor();
    await transcript.locator('li[data-type="tool_result"]').waitFor();
    await transcript
      .locator('li[data-type="user_turn"]', { hasText: "Answer in one sentence." })
      .waitFor();
    await transcript.locator('li[data-type="model_turn"]', { hasText: "loosely coiled" }).waitFor();
    const run = await world.until(id, "completed", (d) => d.run.status === "Completed");
    assert.equal(run.run.output, "A skein is a loosely coiled length of yarn.");
    // The attempt is over: a control now answers StaleTarget.
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    await page.locator('ul.outcomes li[data-outcome="StaleTarget"]').waitFor();
    await page.context().close();
  });

  test("an action without the capability answers CapabilityNotSupported; Cancel ends the attempt", async () => {
    world.model.push({ tool_calls: [{ id: "call-2", name: "lookup", arguments: "{}" }] });
    const id = await world.start("ask_limited", { q: "Look it up." });
    const page = await open(`/ui/n/default/runs/${id}`);
    await page.getByRole("link", { name: "Open transcript" }).click();
    // Waiting for an approval it cannot get (RespondToApproval is not advertised): live.
    await page.locator('ol.transcript li[data-type="approval"]', { hasText: "pending" }).waitFor();
    await page.getByLabel("Message").fill("Hurry.");
    await page.getByLabel("Priority").selectOption("Interrupt");
    await page.getByRole("button", { name: "Inject" }).click();
    await page
      .locator('ul.outcomes li[data-outcome="CapabilityNotSupported"]', { hasText: "Interrupt" })
      .waitFor();
    await page.getByRole("button", { name: "Cancel attempt…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel attempt" }).click();
    await page.locator('ul.outcomes li[data-outcome="Applied"]', { hasText: "Cancel" }).waitFor();
    await page.locator('ol.transcript li[data-type="control"]', { hasText: "Cancel" }).waitFor();
    const run = await world.until(id, "failed", (d) => d.run.status === "Failed");
    assert.match(run.run.failure.message, /cancelled/);
    await page.context().close();
  });

  test("a stuck run shows its pending activity and that no worker serves its queue", async () => {
    const id = await world.start("stuck");
    const page = await open(`/ui/n/default/runs/${id}`);
    const pending = page.locator('table.pending tr[data-state="waiting"]');
    await pending.waitFor();
    assert.match((await pending.textContent()) ?? "", /nothing/);
    await page.locator("table.workers", { hasText: "no worker connected" }).waitFor();
    await world.api("/workflows/cancel", { workflow_id: id });
    await page.locator('[data-run-status="Cancelled"]').waitFor();
    await page.context().close();
  });

  test("signal, pause and resume a run, each confirmed first", async () => {
    const id = await world.start("waiter");
    const page = await open(`/ui/n/default/runs/${id}`);
    await page.locator('[data-run-status="Running"]').waitFor();
    // The history arrives over the history stream (not the describe long poll).
    await page.locator('[data-live="stream"]').waitFor();
    await page.getByRole("button", { name: "Pause…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "pause" }).click();
    await page.locator('[data-run-status="Paused"]').waitFor();
    await page.locator('li[data-event="RunPaused"]').waitFor();
    await page.getByRole("button", { name: "Resume…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "resume" }).click();
    await page.locator('[data-run-status="Running"]').waitFor();
    await page.getByRole("button", { name: "Signal…" }).click();
    const dialog = page.getByRole("dialog", { name: "Send a signal" });
    await dialog.getByLabel("Signal name").fill("go");
    await dialog.getByLabel("Payload (JSON)").fill('{"ok": true}');
    await dialog.getByRole("button", { name: "Send signal" }).click();
    await page.locator('li.signal[data-signal="go"]').waitFor();
    await page.locator('[data-run-status="Completed"]').waitFor();
    assert.match((await page.locator("pre[data-output]").textContent()) ?? "", /"ok": true/);
    await page.context().close();
  });

  test("a run of 1,200 signals: its history read in pages, the newest drawn, older on request", async () => {
    const id = await world.start("waiter");
    for (let i = 0; i < LONG_RUN_TICKS; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          world.api("/workflows/signal", { workflow_id: id, signal: "tick", payload: i + j }),
        ),
      );
    }
    await world.api("/workflows/signal", { workflow_id: id, signal: "go" });
    const run = await world.until(id, "completed", (d) => d.run.status === "Completed");
    assert.equal(run.run.status, "Completed");
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.on("pageerror", (error) => {
      throw error;
    });
    const reads: { after: number; limit: number }[] = [];
    page.on("request", (r) => {
      if (r.url().endsWith("/workflows/history")) reads.push(r.postDataJSON());
    });
    await page.goto(`${world.url}/ui/n/default/runs/${id}#token=${world.token}`);
    await page.locator('[data-live="ended"]').waitFor();
    // The end of the history is drawn: the last signal, the run's end.
    await page.locator('li.signal[data-signal="go"]').waitFor();
    await page.locator('li[data-event="RunCompleted"]').waitFor();
    const timeline = page.locator("ol.timeline");
    const items = Number(await timeline.getAttribute("data-items"));
    assert.ok(items > LONG_RUN_TICKS, `${items} timeline items`);
    const drawn = await page.locator("ol.timeline > li.item").count();
    assert.ok(drawn <= 200, `${drawn} items drawn of ${items}`);
    assert.equal(Number(await timeline.getAttribute("data-hidden")), items - drawn);
    // Every event was read, in pages of at most 1000, each starting where the last ended.
    assert.match((await page.locator("[data-live]").textContent()) ?? "", /\(1\d{3} events/);
    assert.deepEqual(
      reads.map((r) => [r.after, r.limit]),
      [
        [0, 1000],
        [1000, 1000],
      ],
    );
    await page.locator("button[data-older]").click();
    await until("a window of older items drawn", async () => {
      const now = await page.locator("ol.timeline > li.item").count();
      return now === drawn + 200 ? now : undefined;
    });
    await context.close();
  });

  test("definitions with their versions; deployments with their process and log", async () => {
    const page = await open("/ui/n/default/definitions");
    const row = page.locator('tr[data-definition="retrying"]');
    await row.getByRole("button", { name: "Versions" }).click();
    const version = page.locator("ul.versions li").first();
    await version.waitFor();
    assert.match((await version.textContent()) ?? "", /latest/);
    await version.locator("summary").click();
    assert.match((await version.locator("pre").textContent()) ?? "", /"flaky"/);
    await page.getByRole("link", { name: "deployments" }).click();
    const deployment = page.locator('tr[data-deployment="echoes"]');
    await deployment.locator(".badge.state.running").waitFor();
    await deployment.getByRole("button", { name: "Log" }).click();
    await page.locator(".logs pre.log, .logs .empty").first().waitFor();
    assert.equal(await page.locator('.logs [role="alert"]').count(), 0);
    await page.context().close();
  });

  test("a namespace-scoped sign-in link sees its namespace only", async () => {
    const theirs = await world.start("waiter", {}, "other");
    const link = signInLink(["--namespace", "other", "--subject", "carol"]);
    assert.match(link, new RegExp(`^${world.url}/ui/#token=`));
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    await page.locator('tr[data-namespace="other"]').waitFor();
    // The token left the address bar for the tab's session storage.
    assert.equal(new URL(page.url()).hash, "");
    assert.ok(await page.evaluate(() => sessionStorage.getItem("skein.ui.token")));
    assert.equal(await page.locator("tr[data-namespace]").count(), 1);
    await page.locator("header.top .who", { hasText: "carol" }).waitFor();
    await page.locator('tr[data-namespace="other"] a', { hasText: "other" }).click();
    await page.locator(`.vrow[data-workflow-id="${theirs}"]`).waitFor();
    await page.goto(`${world.url}/ui/n/default/runs`);
    await page.locator('[role="alert"][data-code="forbidden"]').waitFor();
    const retried = (await world.api("/workflows/list", { namespace: "default", limit: 1 })).body
      .runs[0];
    await page.goto(`${world.url}/ui/n/default/runs/${retried.workflow_id}`);
    await page.locator('[role="alert"][data-code="forbidden"]').first().waitFor();
    assert.equal(await page.locator("li.activity").count(), 0);
    // Signing out forgets the token; the sign-in form takes one again.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Bearer token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator('[role="alert"]', { hasText: "unauthenticated" }).waitFor();
    await context.close();
  });

  test("an expired sign-in link brings the sign-in form back", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(signInLink(["--namespace", "other", "--ttl", "2s"]));
    await page.locator('tr[data-namespace="other"]').waitFor();
    // Each visit calls the API again; once the token has expired the answer is 401.
    await until("the console to ask for a sign-in again", async () => {
      if ((await page.getByLabel("Bearer token").count()) > 0) return true;
      // The form may replace the page between the look and the click: the next look sees it.
      await page
        .getByRole("link", { name: "namespaces" })
        .click({ timeout: 2000 })
        .catch(() => undefined);
      return undefined;
    });
    await page.locator('[role="alert"]', { hasText: "Signed out" }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem("skein.ui.token")), null);
    await context.close();
  });
});
