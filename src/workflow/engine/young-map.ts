/**
 * A `Map` for a long-lived collection that takes a key and drops one on every step (the
 * matcher's holdings, the timer queue's attempt timers): after every `RENEW_AFTER` deletes
 * its entries move to a new `Map`.
 *
 * Why: V8 keeps a `Map`'s entries in a hash table that it rebuilds as deleted entries pile
 * up, and it allocates the new table in the generation the old one lives in. A map that has
 * lived through two scavenges is in the old generation, so from then on every rebuild lands
 * there: about 55 bytes of old generation per key added and dropped (measured, Node 24, a
 * steady size of 64), garbage that only a full mark (most of the V8 helper threads' time in
 * the closed loop) reclaims. A fresh map's table is young, its rebuilds stay young and die in
 * a scavenge; moving 64 entries every 256 deletes costs a quarter of an entry per delete.
 * Iteration order is the map's (a copy keeps it).
 */

/** Deletes between two renewals. */
export const RENEW_AFTER = 256;

export class YoungMap<K, V> {
  #map = new Map<K, V>();
  #deletes = 0;

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  set(key: K, value: V): void {
    this.#map.set(key, value);
  }

  delete(key: K): boolean {
    if (!this.#map.delete(key)) return false;
    if (++this.#deletes >= RENEW_AFTER) {
      this.#deletes = 0;
      // `new Map(map)` walks the map through the iterator protocol, an entry array and a
      // result object per key; `forEach` hands each entry over without them.
      const fresh = new Map<K, V>();
      this.#map.forEach((value, key) => {
        fresh.set(key, value);
      });
      this.#map = fresh;
    }
    return true;
  }

  clear(): void {
    this.#map = new Map();
    this.#deletes = 0;
  }

  entries(): MapIterator<[K, V]> {
    return this.#map.entries();
  }

  values(): MapIterator<V> {
    return this.#map.values();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map.entries();
  }
}
