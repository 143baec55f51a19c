/**
 * Debian's Chromium for the consoles' browser tests, driven by playwright-core (never a
 * downloaded browser). In CI a missing Chromium fails the test file (`.ci/run` installs it);
 * elsewhere the browser tests are skipped with the reason.
 */

import { existsSync } from "node:fs";
import { after } from "node:test";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** Fails (never skips) in CI when Debian's Chromium is missing; elsewhere says why. */
export function chromiumPresent(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
  return false;
}

/** A headless Chromium closed when the test file ends. */
export async function launchChromium(extraFlags: readonly string[] = []): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...CHROMIUM_FLAGS, ...extraFlags],
  });
  after(() => browser.close());
  return browser;
}
