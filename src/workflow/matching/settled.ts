/**
 * The attempts the matcher settled lately (a result reported, or released by the engine), so
 * a result a worker resends after a reconnect is acknowledged and never reported twice, and a
 * hello listing a settled attempt needs no re-attach. Bounded: past `capacity` the oldest is
 * forgotten (the engine is still the final judge of which attempt is current).
 */

export class SettledMemory {
  readonly #keys = new Set<string>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  has(key: string): boolean {
    return this.#keys.has(key);
  }

  remember(key: string): void {
    this.#keys.add(key);
    if (this.#keys.size > this.#capacity) {
      const oldest = this.#keys.values().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
  }

  /** A result that was not accepted after all: its resend must be reported again. */
  forget(key: string): void {
    this.#keys.delete(key);
  }
}
