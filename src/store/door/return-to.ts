/**
 * Where a finished sign-in sends the browser: the `return` of `/signin`, kept only when it
 * names a page of this door. Browsers read a `Location` with the WHATWG URL parser, which
 * turns `\` into `/`, drops tabs and newlines and honours `//host`; a check on the raw text
 * ("starts with one slash") misses every one of those. So the value is resolved with the same
 * parser against the door's origin, refused unless the result has that origin, and answered
 * as an absolute URL of the origin: even a path the parser leaves as `//x` then stays a path.
 */

/** The absolute same-origin URL for `wanted`, or the console's home when it leaves `origin`. */
export function returnTarget(wanted: string | null, origin: string): string {
  const home = `${origin}/`;
  if (wanted === null) return home;
  let target: URL;
  try {
    target = new URL(wanted, home);
  } catch {
    return home;
  }
  return target.origin === origin ? target.href : home;
}
