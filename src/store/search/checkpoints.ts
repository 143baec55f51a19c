/**
 * The vector indexes' checkpoint files as the event loop sees them (the index thread writes
 * them: hnsw.ts): at open, every current checkpoint (`NAME.json`, naming its index and
 * labels files) is read and every file no checkpoint names (a save killed half way) is
 * deleted; a head's files are removed when its index is dropped; their sizes are counted
 * for `store.stats`.
 */

import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Checkpoint, removeCheckpointFiles } from "./hnsw.ts";

/** The current checkpoints in `dir`; files none of them names are deleted. */
export function openCheckpoints(dir: string): Checkpoint[] {
  const named = new Set<string>();
  const checkpoints: Checkpoint[] = [];
  for (const file of readdirSync(dir)) {
    if (!file.endsWith(".json") || file.endsWith(".labels.json")) continue;
    try {
      const checkpoint = JSON.parse(readFileSync(join(dir, file), "utf8")) as Checkpoint;
      checkpoints.push(checkpoint);
      named.add(file).add(checkpoint.index).add(checkpoint.labels);
    } catch {
      // A damaged checkpoint name: the index is rebuilt when next searched.
    }
  }
  for (const file of readdirSync(dir)) {
    if (!named.has(file)) rmSync(join(dir, file), { force: true });
  }
  return checkpoints;
}

/** Removes a head's checkpoint: its files and its name file. */
export function forgetCheckpoint(
  dir: string,
  name: string,
  checkpoint: Checkpoint | undefined,
): void {
  if (checkpoint !== undefined) removeCheckpointFiles(dir, checkpoint);
  rmSync(join(dir, `${name}.json`), { force: true });
}

/** Bytes on disk of a checkpoint's files (0 without one). */
export function checkpointBytes(dir: string, checkpoint: Checkpoint | undefined): number {
  if (checkpoint === undefined) return 0;
  let bytes = 0;
  for (const file of [checkpoint.index, checkpoint.labels]) {
    const path = join(dir, file);
    if (existsSync(path)) bytes += statSync(path).size;
  }
  return bytes;
}
