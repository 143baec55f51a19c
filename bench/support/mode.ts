/**
 * How a benchmark is being run. `SKEIN_BENCH_SMOKE=1` (or `--smoke` on its command line)
 * asks for the smoke size: every loop, record count and duration shrunk so the whole bench
 * runs in seconds, which `npm run bench:smoke` uses to prove each bench still runs and still
 * reports figures. Sizes come from `knob`, so one rule decides them: the knob's environment
 * variable when set, else the smoke size in smoke mode, else the normal size. The knobs read
 * are kept and recorded with the results, so a figure always says what size produced it.
 */

export const SMOKE = process.env.SKEIN_BENCH_SMOKE === "1" || process.argv.includes("--smoke");

const read: Record<string, number> = {};

/** The size `name` stands for in this run: its variable, or `normal`, or `smoke` (smoke mode). */
export function knob(name: string, normal: number, smoke: number): number {
  const text = process.env[name];
  const value = text === undefined || text === "" ? (SMOKE ? smoke : normal) : Number(text);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`${name}=${text} is not a non-negative number`);
  }
  read[name] = value;
  return value;
}

/** The knobs read so far, with their values (recorded with the results). */
export function knobsRead(): Readonly<Record<string, number>> {
  return { ...read };
}
