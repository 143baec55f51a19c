/**
 * `new Date(ms).toISOString()`, the same text, for the times the HTTP answers carry (a run's
 * start, update and end, a pending activity's schedule). V8's `toISOString` is a runtime
 * call that splits the time into calendar fields each time (about 0.5 µs, three per
 * describe); the times an answer writes mostly fall on one day, so the day's text
 * (`2026-11-29T`, from `toISOString` itself, extended years included) is kept and only the
 * time of day is written here. Throws as `toISOString` does for a time it cannot write.
 */

const DAY_MS = 86_400_000;
/** The latest time a Date holds (and the earliest, negated). */
const MAX_MS = 8.64e15;

/** The day last written: its first ms and its text up to and including the `T`. */
let dayStart = Number.NaN;
let dayText = "";

const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

export function isoTime(ms: number): string {
  let inDay = ms - dayStart;
  // Whole ms in Date's range only: Date drops a fraction itself, and past ±8.64e15 throws.
  const plain = Number.isInteger(ms) && ms <= MAX_MS && ms >= -MAX_MS;
  if (!(inDay >= 0 && inDay < DAY_MS) || !plain) {
    const text = new Date(ms).toISOString();
    if (!plain) return text;
    dayStart = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
    dayText = text.slice(0, text.indexOf("T") + 1);
    inDay = ms - dayStart;
  }
  const seconds = Math.floor(inDay / 1000);
  return (
    `${dayText}${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:` +
    `${two(seconds % 60)}.${three(inDay % 1000)}Z`
  );
}
