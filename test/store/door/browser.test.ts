// The door in a real browser: Debian's Chromium (playwright-core, no downloaded browser)
// against real skein-idp, skein-store serve and door processes. Sign-in, browsing, a diff of
// two branches, an edit that shows up in the history, a denied act, sign-out and the
// refusals of the sign-in flow; the diff and history views are photographed into docs/.

import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";
import {
  CHROMIUM,
  CHROMIUM_FLAGS,
  chromiumPresent,
  type DoorWorld,
  doorWorld,
  PASSWORDS,
  raw,
  signIn,
} from "./support.ts";

const present = chromiumPresent();
// The screenshots shown in the docs are refreshed with SKEIN_DOOR_SCREENSHOTS=1; otherwise
// they are still taken (the views render) but into a temp folder, so a test run leaves the
// work tree clean.
const shots =
  process.env.SKEIN_DOOR_SCREENSHOTS === "1"
    ? fileURLToPath(new URL("../../../docs/", import.meta.url))
    : mkdtempSync(join(tmpdir(), "skein-door-shots-"));
const docs = (name: string) => join(shots, name);

async function launch(): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  after(() => browser.close());
  return browser;
}

// Started at the top level: helpers register their cleanup with after(), which a before()
// hook would run as soon as the hook ends.
const skip = present ? false : `${CHROMIUM} is not installed`;
const browser = present ? await launch() : (undefined as unknown as Browser);
const world = present ? await doorWorld() : (undefined as unknown as DoorWorld);
const bounded = present
  ? await doorWorld({ SERVICE_SESSION_SECONDS: "5", SERVICE_PENDING_SIGNINS: "3" })
  : (undefined as unknown as DoorWorld);

describe("door in Chromium", { skip }, () => {
  test("sign in, browse, diff two branches, edit and see the version in history", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 820 } });
    const page = await context.newPage();
    await signIn(page, world, "alice", "/s/shop/c/notes");
    await page.locator('tr[data-branch="agent-fix"]').waitFor();
    // The diff of the agent's branch against main, from the branches view.
    await page
      .locator('tr[data-branch="agent-fix"]')
      .getByRole("link", { name: "diff with main" })
      .click();
    await page.locator(".change").first().waitFor();
    assert.equal(await page.locator('.change[data-type="added"]').count(), 1);
    assert.equal(await page.locator('.change[data-type="removed"]').count(), 1);
    assert.equal(await page.locator('.change[data-type="modified"]').count(), 1);
    const modified = page.locator('.change[data-key="plan/intro"] .paths');
    assert.match((await modified.textContent()) ?? "", /\.status:\s*"draft" → "ready"/);
    assert.match((await modified.textContent()) ?? "", /\+ \.tags\[1\]:\s*"b"/);
    assert.match(page.url(), /\/s\/shop\/c\/notes\/diff\?from=main&to=agent-fix$/);
    await page.screenshot({ path: docs("door-diff.png") });
    // The shared URL opens the same view in a fresh tab of the same session.
    const shared = await context.newPage();
    await shared.goto(page.url());
    await shared.locator('.change[data-key="plan/middle"]').waitFor();
    await shared.close();
    // Browse with a prefix, open a document, edit it.
    await page.goto(`${world.origin}/s/shop/c/notes/b/agent-fix/docs?prefix=plan/`);
    await page.locator("td.mono a", { hasText: "plan/middle" }).waitFor();
    assert.equal(await page.locator("td.mono a", { hasText: "readme" }).count(), 0);
    await page.locator("td.mono a", { hasText: "plan/middle" }).click();
    const area = page.locator('textarea[name="value"]');
    await area.waitFor();
    await area.fill('{"title": "Middle", "words": 320}');
    await page.getByRole("button", { name: "Save" }).click();
    const notice = page.getByRole("status");
    await notice.waitFor();
    const version = /v(\d+)/.exec((await notice.textContent()) ?? "")![1]!;
    await page.getByRole("link", { name: "See it in the history" }).click();
    const row = page.locator(`tr[data-version="${version}"]`);
    await row.waitFor();
    assert.match((await row.textContent()) ?? "", /alice/);
    await page.screenshot({ path: docs("door-history.png") });
    await context.close();
  });

  test("a query runs on a branch and its URL shares it", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, world, "bob", "/s/shop/c/notes/b/agent-fix/query");
    await page.locator('input[name="args"]').fill('{"status":"ready"}');
    await page.getByRole("button", { name: "Run" }).click();
    const rows = page.locator("table.query tr td.mono");
    await rows.first().waitFor();
    assert.deepEqual(await rows.allTextContents(), ["plan/intro"]);
    assert.match(page.url(), /\/b\/agent-fix\/query\?code=.+&args=/);
    // The same URL on main: the draft is not ready there.
    await page.goto(page.url().replace("/b/agent-fix/", "/b/main/"));
    await page.locator("p.muted", { hasText: "0 rows" }).waitFor();
    await context.close();
  });

  test("a denied act is shown as denied", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, world, "bob", "/s/shop/c/notes/b/main/doc/readme");
    const area = page.locator('textarea[name="value"]');
    await area.waitFor();
    await area.fill('"changed by bob"');
    await page.getByRole("button", { name: "Save" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    assert.equal(await alert.getAttribute("data-code"), "permission_denied");
    assert.match((await alert.textContent()) ?? "", /^\s*Denied/);
    const doc = await world.admin.get("notes", "readme");
    assert.equal(doc.value, "hello", "nothing was written");
    await context.close();
  });

  test("sign out ends the session on the server", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, world, "alice");
    const cookie = (await context.cookies()).find((c) => c.name === "skein_door")!;
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.secure, true);
    assert.equal(cookie.sameSite, "Lax");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Signed out" }).waitFor();
    // The old cookie value no longer opens a session.
    const replay = await raw(world.origin, "/api/session", {
      headers: { cookie: `skein_door=${cookie.value}` },
    });
    assert.equal(replay.status, 401);
    await context.close();
  });

  test("state-changing calls need the session's CSRF token and this origin", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, world, "alice");
    const cookie = (await context.cookies()).find((c) => c.name === "skein_door")!;
    const info = await raw(world.origin, "/api/session", {
      headers: { cookie: `skein_door=${cookie.value}` },
    });
    const csrf = (JSON.parse(info.body) as { csrf: string }).csrf;
    const body = Buffer.from(
      JSON.stringify({
        store: "shop",
        verb: "document.put",
        args: { collection: "notes", key: "x", value: 1 },
      }),
    );
    const attempt = (headers: Record<string, string>) =>
      raw(world.origin, "/api/call", {
        method: "POST",
        headers: {
          cookie: `skein_door=${cookie.value}`,
          "content-type": "application/json",
          ...headers,
        },
        body,
      });
    const noToken = await attempt({});
    assert.equal(noToken.status, 403);
    assert.match(noToken.body, /csrf_refused/);
    const otherSite = await attempt({ "x-csrf-token": csrf, origin: "https://elsewhere.example" });
    assert.equal(otherSite.status, 403);
    const signOutForged = await raw(world.origin, "/signout", {
      method: "POST",
      headers: { cookie: `skein_door=${cookie.value}` },
    });
    assert.equal(signOutForged.status, 403);
    const fine = await attempt({ "x-csrf-token": csrf, origin: world.origin });
    assert.equal(fine.status, 200, fine.body);
    assert.equal((await world.admin.get("notes", "x")).value, 1);
    await context.close();
  });

  test("no password, pass or secret reaches the door's log", () => {
    const log = world.door.stderr();
    for (const password of Object.values(PASSWORDS)) assert.ok(!log.includes(password));
    assert.ok(!log.includes("eyJ"), "no JWT in the log");
  });

  test("a forged state is refused, and a state from another browser too", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`${world.origin}/callback?code=x&state=forged`);
    assert.equal(response?.status(), 400);
    await page.getByRole("heading", { name: "This sign-in is not valid" }).waitFor();
    // A real state, started by another client, carried to this browser.
    const started = await raw(world.origin, "/signin");
    assert.equal(started.status, 302);
    const state = new URL(String(started.headers.location)).searchParams.get("state")!;
    const stolen = await page.goto(`${world.origin}/callback?code=x&state=${state}`);
    assert.equal(stolen?.status(), 400);
    await context.close();
  });

  test("a missing asset is 404; the console's own files are served", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const missing = await page.goto(`${world.origin}/nothing-here.js`);
    assert.equal(missing?.status(), 404);
    const css = await page.goto(`${world.origin}/console.css`);
    assert.equal(css?.status(), 200);
    const vendored = await page.goto(`${world.origin}/vendor/preact.mjs`);
    assert.equal(vendored?.status(), 200);
    await context.close();
  });

  test("the head and body limits", async () => {
    const big = await raw(world.origin, "/api/session", {
      headers: { "x-pad": "a".repeat(17_000) },
    });
    assert.equal(big.status, 431);
    // A body declared over the limit is refused before it is read (the client sends only its head).
    const large = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: "127.0.0.1",
          port: world.port(),
          path: "/api/call",
          method: "POST",
          headers: { "content-type": "application/json", "content-length": "1048577" },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (d: string) => {
            text += d;
          });
          res.on("end", () => {
            resolve({ status: res.statusCode ?? 0, body: text });
            req.destroy();
          });
        },
      );
      req.on("error", reject);
      req.flushHeaders();
    });
    assert.equal(large.status, 413);
    assert.match(large.body, /body_too_large/);
    const fits = await raw(world.origin, "/api/call", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Buffer.from("{}"),
    });
    assert.equal(fits.status, 401, "a body within the limit reaches the session check");
  });
});

describe("door in Chromium: bounds from the environment", { skip }, () => {
  const world = bounded;

  test("the session cookie lives SERVICE_SESSION_SECONDS and the session expires with it", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, world, "alice", "/s/shop");
    const cookie = (await context.cookies()).find((c) => c.name === "skein_door")!;
    assert.ok(cookie.expires > 0 && cookie.expires - Date.now() / 1000 <= 6, `${cookie.expires}`);
    // Time passes on purpose: the session's lifetime (5 s) runs out.
    await new Promise((r) => setTimeout(r, 5500));
    // The server-side session has ended even for a browser that kept the cookie.
    const replay = await raw(world.origin, "/api/session", {
      headers: { cookie: `skein_door=${cookie.value}` },
    });
    assert.equal(replay.status, 401);
    await page.goto(`${world.origin}/s/shop`);
    await page.getByRole("link", { name: "Sign in" }).waitFor();
    await context.close();
  });

  test("pending sign-ins are capped: at the cap a new one is refused with 503", async () => {
    // The session test above finished its sign-in; three more unfinished fill the cap.
    for (let i = 0; i < 3; i++) assert.equal((await raw(world.origin, "/signin")).status, 302);
    const page = await browser.newPage();
    const refused = await page.goto(`${world.origin}/signin`);
    assert.equal(refused?.status(), 503);
    await page.getByRole("heading", { name: "Too many sign-ins in progress" }).waitFor();
    await page.close();
  });
});
