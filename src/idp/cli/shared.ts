/**
 * What the skein-idp commands share: `--data-dir` (made absolute, created 0700), opening the
 * state, and reporting a refusal as one stderr line `skein-idp <command>: <code>: <message>`
 * with exit status 2 (usage mistakes are status 2 too, from the common CLI skeleton).
 */

import { resolve } from "node:path";
import type { Io } from "../../common/cli.ts";
import { UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { dbFile, ensureDataDir } from "../data-dir.ts";
import { openIdpDatabase } from "../state/database.ts";
import { IdpState } from "../state/state.ts";

export const REFUSAL_EXIT = 2;

export const dataDirOption = { "data-dir": { type: "string" } } as const;

export function dataDirOf(values: { "data-dir"?: string | undefined }): string {
  const dir = values["data-dir"];
  if (dir === undefined) throw new UsageError("--data-dir DIR is required");
  return resolve(dir);
}

/** Runs `work` on the data directory's state and closes it afterwards. */
export function withState<T>(dataDir: string, work: (state: IdpState) => T): T {
  ensureDataDir(dataDir);
  const db = openIdpDatabase(dbFile(dataDir));
  try {
    return work(new IdpState(db));
  } finally {
    db.close();
  }
}

export async function reportRefusals(
  command: string,
  io: Io,
  body: () => Promise<number>,
): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (!(error instanceof SkeinError)) throw error;
    const message = error.message.replace(/[\r\n]+/g, " ");
    io.err(`skein-idp ${command}: ${error.code}: ${message}`);
    return REFUSAL_EXIT;
  }
}

/** A subcommand word (`user add`): the first positional, checked against the known ones. */
export function subcommand<const T extends string>(
  positionals: readonly string[],
  known: readonly T[],
): T {
  const word = positionals[0];
  if (word === undefined || !(known as readonly string[]).includes(word)) {
    throw new UsageError(`expected one of ${known.join(", ")}`);
  }
  return word as T;
}
