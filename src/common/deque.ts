/**
 * A FIFO queue with O(1) push and shift (an array with a moving head, compacted once the
 * dead prefix is over half of it) and a linear `remove`, for the matcher's per-action
 * backlogs: most attempts leave from the front, a withdrawn one from anywhere.
 */

export class Deque<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }
  push(item: T): void {
    this.#items.push(item);
  }
  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
  remove(match: (item: T) => boolean): T | undefined {
    for (let i = this.#head; i < this.#items.length; i++) {
      const item = this.#items[i];
      if (item !== undefined && match(item)) {
        this.#items.splice(i, 1);
        return item;
      }
    }
    return undefined;
  }
}
