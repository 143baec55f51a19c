// The open redirect after door sign-in (#30 item 3): hostile `return` values, each replayed
// through a real sign-in in Chromium (door, skein-idp, store, TLS terminator), must end on a
// page of the door's own origin, and no request may leave for another host on the way.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { returnTarget } from "../../../src/store/door/return-to.ts";
import { doorInChromium, signIn } from "./support.ts";

/** A `return` value and the path (with query) the browser must end on. */
const RETURNS: readonly (readonly [string, string])[] = [
  ["/\\evil.example/", "/"],
  ["/\t/evil.example/", "/"],
  ["/\n/evil.example/", "/"],
  ["/\r\n/evil.example/", "/"],
  ["//evil.example/", "/"],
  ["/\\\\evil.example/", "/"],
  ["\\\\evil.example/", "/"],
  ["\\/evil.example/", "/"],
  [" //evil.example/", "/"],
  ["https://evil.example/", "/"],
  ["HTTP://evil.example/", "/"],
  ["https://127.0.0.1:1@evil.example/", "/"],
  ["//127.0.0.1:1/", "/"],
  ["javascript:alert(document.domain)", "/"],
  ["data:text/html,<script>alert(1)</script>", "/"],
  // Encoded forms stay encoded: paths of this origin, never another host.
  ["/%5Cevil.example/", "/%5Cevil.example/"],
  ["/%2F%2Fevil.example/", "/%2F%2Fevil.example/"],
  ["%2F%2Fevil.example", "/%2F%2Fevil.example"],
  ["/%09/evil.example/", "/%09/evil.example/"],
  // A dot segment that leaves `//host` as the path: still a path of this origin.
  ["/.//evil.example/", "//evil.example/"],
  ["https:evil.example", "/evil.example"],
  ["/s/shop/c/notes?tab=1", "/s/shop/c/notes?tab=1"],
];

const ORIGIN = "https://127.0.0.1:8443";

describe("returnTarget keeps only this origin", () => {
  for (const [wanted, path] of RETURNS) {
    test(JSON.stringify(wanted), () => {
      assert.equal(returnTarget(wanted, ORIGIN), `${ORIGIN}${path}`);
    });
  }
  test("no return, an absolute URL of this origin, and another scheme of this host", () => {
    assert.equal(returnTarget(null, ORIGIN), `${ORIGIN}/`);
    assert.equal(returnTarget(`${ORIGIN}/s/shop`, ORIGIN), `${ORIGIN}/s/shop`);
    assert.equal(returnTarget("http://127.0.0.1:8443/s/shop", ORIGIN), `${ORIGIN}/`);
  });
});

const { skip, browser, world } = await doorInChromium();

describe("door sign-in with a hostile return, in Chromium", { skip }, () => {
  test("every return value ends on a page of the door's origin", async () => {
    const context = await browser.newContext();
    const left: string[] = [];
    const allowed = new Set([world.origin, new URL(world.issuer).origin]);
    // Any request to another origin is recorded (redirect hops too) and, when routable, never
    // sent: a route does not see the hops of a redirect, the request event does.
    context.on("request", (request) => {
      if (!allowed.has(new URL(request.url()).origin)) left.push(request.url());
    });
    await context.route("**/*", (route) =>
      allowed.has(new URL(route.request().url()).origin) ? route.continue() : route.abort(),
    );
    const page = await context.newPage();
    await signIn(page, world, "alice");
    for (const [wanted, path] of RETURNS) {
      // The IdP remembers the sign-in: each round trip comes straight back to the callback.
      await page
        .goto(`${world.origin}/signin?return=${encodeURIComponent(wanted)}`)
        .catch(() => undefined);
      await page
        .waitForURL(
          (url) => url.origin !== world.origin || !/^\/(signin|callback)$/.test(url.pathname),
        )
        .catch(() => undefined);
      assert.deepEqual(left, [], `return=${JSON.stringify(wanted)} left the door`);
      const ended = new URL(page.url());
      assert.equal(ended.origin, world.origin, `return=${JSON.stringify(wanted)}`);
      assert.equal(ended.pathname + ended.search, path, `return=${JSON.stringify(wanted)}`);
    }
    await context.close();
  });
});
