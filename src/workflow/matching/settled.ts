/**
 * The attempts the matcher settled lately (a result reported, or released by the engine), so
 * a result a worker resends after a reconnect is acknowledged and never reported twice, and a
 * hello listing a settled attempt needs no re-attach. Bounded: it keeps at least the latest
 * `capacity / 2` settled keys and never more than `capacity`; older ones are forgotten (the
 * engine is still the final judge of which attempt is current).
 */

export class SettledMemory {
  /**
   * Two generations: keys are added to the young one; when it holds half the capacity it
   * becomes the old one and the previous old one is dropped whole. A single set that dropped
   * its oldest key on every add (one per settled step) paid a delete in a table of 65,536
   * keys each time, and a long-lived table that deletes as it adds is rebuilt in V8's old
   * generation as its deleted entries pile up; a generation is filled and then let go.
   */
  #young = new Set<string>();
  #old = new Set<string>();
  readonly #half: number;

  constructor(capacity: number) {
    this.#half = Math.max(1, Math.floor(capacity / 2));
  }

  has(key: string): boolean {
    return this.#young.has(key) || this.#old.has(key);
  }

  remember(key: string): void {
    this.#young.add(key);
    if (this.#young.size < this.#half) return;
    this.#old = this.#young;
    this.#young = new Set();
  }

  /** A result that was not accepted after all: its resend must be reported again. */
  forget(key: string): void {
    this.#young.delete(key);
    this.#old.delete(key);
  }
}
