/**
 * A node:test reporter that keeps how long each test file took, so that test/run.ts can
 * start the longest files first: with files running four at a time, a long file started
 * last (they run in name order otherwise, and the cluster tests sort late) holds up the end
 * of the run alone. A file's time is the sum of its top-level tests' durations, written when
 * the run ends to the file named by SKEIN_TEST_TIMES_FILE (run.ts sets it), merged over the
 * times of files this run did not run.
 */

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";

interface TestEvent {
  readonly type: string;
  readonly data?: {
    readonly nesting?: number;
    readonly file?: string;
    readonly details?: { readonly duration_ms?: number };
  };
}

export const TIMES_FILE_ENV = "SKEIN_TEST_TIMES_FILE";

/** File (relative to the project) → seconds, from a times file; empty when there is none. */
export function readTimes(path: string): Record<string, number> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof parsed !== "object" || parsed === null) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter(([, v]) => typeof v === "number" && Number.isFinite(v)),
    ) as Record<string, number>;
  } catch {
    return {};
  }
}

/** Prints nothing (its destination is stderr); writes the times file when the run ends. */
export default async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const seconds = new Map<string, number>();
  for await (const event of source) {
    const data = event.data;
    if ((event.type !== "test:pass" && event.type !== "test:fail") || data?.nesting !== 0) continue;
    if (data.file === undefined) continue;
    const file = relative(process.cwd(), data.file);
    seconds.set(file, (seconds.get(file) ?? 0) + (data.details?.duration_ms ?? 0) / 1000);
  }
  const path = process.env[TIMES_FILE_ENV];
  if (path !== undefined && seconds.size > 0) {
    const times = { ...readTimes(path) };
    for (const [file, s] of seconds) times[file] = Math.round(s * 10) / 10;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify(times, Object.keys(times).sort(), 1)}\n`);
  }
  // A reporter is a generator of output; this one's is empty.
  yield "";
}
