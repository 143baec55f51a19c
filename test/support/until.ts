/**
 * The one way tests wait for something to become true: `until(what, read)` calls `read` until
 * it gives a value (anything but undefined or false) and returns it, or fails naming `what`
 * once `timeoutMs` has passed. Every wait has a deadline, so a broken feature fails its test
 * instead of hanging the suite; the deadline is generous because the machine is shared.
 * `what` may be a function, read only on failure, to name the state the wait ended in (the
 * last answer, a child's stderr).
 */

export interface UntilOptions {
  /** How long to keep reading before failing (default 30 s). */
  readonly timeoutMs?: number;
  /** Pause between reads (default 20 ms). */
  readonly intervalMs?: number;
}

export async function until<T>(
  what: string | (() => string),
  read: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 30_000, intervalMs = 20 }: UntilOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}`,
      );
    await new Promise((done) => setTimeout(done, intervalMs));
  }
}
