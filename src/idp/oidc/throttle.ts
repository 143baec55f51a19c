/**
 * The sign-in throttle's counting: failed sign-ins per key in a one-minute window, with a
 * bounded number of keys (the oldest window is forgotten first, so invented keys cannot grow
 * memory). The login page keeps two: one keyed by user name, one by the caller's network
 * source (`sourceOf`), so a password tried across many names is slowed as well as many
 * passwords tried on one name.
 */

const WINDOW_MS = 60_000;

export class FailureWindows {
  readonly #windows = new Map<string, { start: number; failures: number }>();
  readonly #limit: number;
  readonly #capacity: number;

  /** `limit` failures a minute per key before `blocked`; at most `capacity` keys kept. */
  constructor(limit: number, capacity: number) {
    this.#limit = limit;
    this.#capacity = capacity;
  }

  blocked(key: string, now = Date.now()): boolean {
    const window = this.#windows.get(key);
    if (window === undefined) return false;
    if (now - window.start >= WINDOW_MS) {
      this.#windows.delete(key);
      return false;
    }
    return window.failures >= this.#limit;
  }

  failed(key: string, now = Date.now()): void {
    const window = this.#windows.get(key);
    if (window !== undefined && now - window.start < WINDOW_MS) {
      window.failures++;
      return;
    }
    this.#windows.delete(key);
    if (this.#windows.size >= this.#capacity) {
      const oldest = this.#windows.keys().next();
      if (!oldest.done) this.#windows.delete(oldest.value);
    }
    this.#windows.set(key, { start: now, failures: 1 });
  }

  succeeded(key: string): void {
    this.#windows.delete(key);
  }
}

/**
 * The throttle's key for a peer address: an IPv4 address as is (IPv4-mapped IPv6 included),
 * an IPv6 address by its /64, since one host is commonly handed a whole /64 and could
 * otherwise take a fresh source for every attempt. Behind a proxy every caller is the proxy.
 */
export function sourceOf(address: string | undefined): string {
  if (address === undefined || address === "") return "unknown";
  const bare = address.split("%")[0]!.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped !== null) return mapped[1]!;
  if (!bare.includes(":")) return bare;
  const [head = "", tail] = bare.split("::");
  const front = head === "" ? [] : head.split(":");
  const back = tail === undefined || tail === "" ? [] : tail.split(":");
  const zeros =
    tail === undefined ? [] : Array(Math.max(0, 8 - front.length - back.length)).fill("0");
  const groups = [...front, ...zeros, ...back]
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16));
  return `${groups.join(":")}::/64`;
}
