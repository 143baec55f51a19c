/**
 * Time-ordered UUIDs (version 7, RFC 9562): 48 bits of Unix milliseconds, then random bits.
 * Run and workflow ids are primary keys of the run store; ids that grow with time are
 * appended near each other in its B-trees instead of landing on a random page each, so a
 * commit of many runs writes a few pages rather than one per run, and the indexes stay
 * compact. Within one millisecond the order is random (no counter): ids are unique, and
 * nothing depends on their order.
 */

import { randomFillSync } from "node:crypto";

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function uuidv7(now: number = Date.now()): string {
  const b = randomFillSync(new Uint8Array(16));
  // The 48-bit timestamp, big-endian.
  let ms = now;
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b[6] = (b[6]! & 0x0f) | 0x70; // version 7
  b[8] = (b[8]! & 0x3f) | 0x80; // variant 10
  const h = Array.from(b, (x) => HEX[x]!);
  return `${h.slice(0, 4).join("")}-${h.slice(4, 6).join("")}-${h.slice(6, 8).join("")}-${h.slice(8, 10).join("")}-${h.slice(10).join("")}`;
}
