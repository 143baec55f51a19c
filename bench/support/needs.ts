/**
 * What a bench needs from the machine beyond the checkout: PostgreSQL and Debian's Chromium.
 * When one is absent the bench's cases that need it are skipped with the reason (printed
 * and recorded), as the tests do; under CI, where both are installed, absence is a failure.
 */

import pg from "pg";
import { redactUrl } from "../../src/workflow/persistence/postgres/store.ts";
import { chromiumPresent } from "../../test/support/chromium.ts";

function inCi(): boolean {
  return process.env.CI !== undefined && process.env.CI !== "";
}

/** Why PostgreSQL at `url` cannot be used, or undefined when it answers. */
export async function postgresMissing(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    const reason = `PostgreSQL at ${redactUrl(url)} is not reachable (${(error as Error).message})`;
    if (inCi()) throw new Error(`${reason}; CI is set, so this is a failure, not a skip`);
    return reason;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Why Chromium cannot be used, or undefined when it is installed. */
export function chromiumMissing(): string | undefined {
  return chromiumPresent() ? undefined : "Debian's Chromium (/usr/bin/chromium) is not installed";
}
