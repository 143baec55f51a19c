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

// Random bytes are drawn from the system in blocks: one `randomFillSync` per id cost more
// than the rest of making it (the server makes two per start).
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;

export function uuidv7(now: number = Date.now()): string {
  if (poolAt + 10 > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const r = pool;
  const at = poolAt;
  poolAt += 10;
  // The 48-bit timestamp, big-endian: the first 12 hex digits.
  const ms = now.toString(16).padStart(12, "0");
  // Then the version (7) and 12 random bits, the variant (binary 10) and 62 random bits.
  return (
    `${ms.slice(0, 8)}-${ms.slice(8)}-` +
    `7${HEX[r[at]! & 0x0f]!.slice(1)}${HEX[r[at + 1]!]}-` +
    `${HEX[(r[at + 2]! & 0x3f) | 0x80]}${HEX[r[at + 3]!]}-` +
    `${HEX[r[at + 4]!]}${HEX[r[at + 5]!]}${HEX[r[at + 6]!]}${HEX[r[at + 7]!]}${HEX[r[at + 8]!]}${HEX[r[at + 9]!]}`
  );
}
