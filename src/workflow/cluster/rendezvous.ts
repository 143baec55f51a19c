/**
 * Rendezvous (highest-random-weight) hashing: each shard goes to the live node with the
 * highest hash of (node, shard). Every node computes the same answer from the same live set,
 * with no coordination, and when a node joins or leaves only the shards it wins or held move:
 * about S/N of S shards, never a reshuffle of the rest.
 */

import { createHash } from "node:crypto";

/** The weight of `node` for `shard`: the first 8 bytes of sha256(node NUL shard). */
export function weight(node: string, shard: number): bigint {
  return createHash("sha256").update(`${node}\u0000${shard}`).digest().readBigUInt64BE(0);
}

/** The desired owner of every shard 0..total-1 among `nodes` (undefined when none is live). */
export function desiredOwners(nodes: readonly string[], total: number): (string | undefined)[] {
  const sorted = [...new Set(nodes)].sort();
  const owners: (string | undefined)[] = [];
  for (let shard = 0; shard < total; shard++) {
    let best: string | undefined;
    let bestWeight = -1n;
    for (const node of sorted) {
      const w = weight(node, shard);
      // Ties (practically never) go to the first id in byte order, the same on every node.
      if (w > bestWeight) {
        best = node;
        bestWeight = w;
      }
    }
    owners.push(best);
  }
  return owners;
}
