/**
 * The name and password check of the login page. A known name costs one scrypt verification
 * (secrets.ts). An unknown name costs none: there is no hash to check, and hashing a decoy for
 * it let anyone spend the IdP's CPU with invented names. So that a wrong name still looks like
 * a wrong password from outside, its answer waits about as long as a verification takes
 * (measured when the check is made, then followed as verifications run), on a timer: no CPU.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { hashSecret, verifySecret } from "../secrets.ts";

export type PasswordVerdict = "ok" | "wrong_password" | "unknown_name";

/** Weight of the newest verification in the running estimate of how long one takes. */
const ESTIMATE_WEIGHT = 0.2;

export class PasswordCheck {
  readonly #lookup: (name: string) => string | undefined;
  readonly #verify: typeof verifySecret;
  #typicalMs = 0;
  /** One hash made at construction, to learn how long one takes before any sign-in. */
  readonly #probed: Promise<void>;

  /**
   * `lookup` gives a user's stored hash; `verify` checks a password against one (a parameter
   * so tests can count the verifications).
   */
  constructor(
    lookup: (name: string) => string | undefined,
    verify: typeof verifySecret = verifySecret,
  ) {
    this.#lookup = lookup;
    this.#verify = verify;
    const started = performance.now();
    this.#probed = hashSecret("skein-idp timing probe").then(() => {
      this.#typicalMs = performance.now() - started;
    });
  }

  async check(name: string, password: string): Promise<PasswordVerdict> {
    const stored = this.#lookup(name);
    if (stored === undefined) {
      await this.#probed;
      await sleep(this.#typicalMs);
      return "unknown_name";
    }
    const started = performance.now();
    const matches = await this.#verify(password, stored);
    this.#typicalMs += (performance.now() - started - this.#typicalMs) * ESTIMATE_WEIGHT;
    return matches ? "ok" : "wrong_password";
  }
}
