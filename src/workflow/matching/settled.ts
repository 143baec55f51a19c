/**
 * The attempts the matcher settled lately (a result reported, or released by the engine), so
 * a result a worker resends after a reconnect is acknowledged and never reported twice, and a
 * hello listing a settled attempt needs no re-attach. Bounded: past `capacity` the oldest is
 * forgotten (the engine is still the final judge of which attempt is current).
 */

export class SettledMemory {
  readonly #keys = new Set<string>();
  /**
   * The keys in the order remembered, a ring: the oldest is found by index, not by a fresh
   * iterator over the set on every remember (one per settled step).
   */
  readonly #order: (string | undefined)[];
  #next = 0;

  constructor(capacity: number) {
    this.#order = new Array<string | undefined>(Math.max(1, capacity)).fill(undefined);
  }

  has(key: string): boolean {
    return this.#keys.has(key);
  }

  remember(key: string): void {
    if (this.#keys.has(key)) return;
    // A forgotten key keeps its slot until the ring comes round to it, so the memory may hold
    // fewer than `capacity` keys (and a key forgotten and remembered again may go early):
    // never more.
    const oldest = this.#order[this.#next];
    if (oldest !== undefined) this.#keys.delete(oldest);
    this.#order[this.#next] = key;
    this.#next = (this.#next + 1) % this.#order.length;
    this.#keys.add(key);
  }

  /** A result that was not accepted after all: its resend must be reported again. */
  forget(key: string): void {
    this.#keys.delete(key);
  }
}
