/**
 * How the store's commands report a refusal: one line on stderr,
 * `skein-store <command>: <code>: <message>`, and exit status 2. Every refusal is a
 * SkeinError (decode refusals included), so the line always carries the spec's code and a
 * message that starts with the field it concerns. Anything else is a bug and propagates.
 */

import type { Io } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";

export const REFUSAL_EXIT = 2;

export function refusalLine(command: string, error: SkeinError): string {
  // One line, whatever a reason quoted: a newline in a message would split the report.
  const message = error.message.replace(/[\r\n]+/g, " ");
  return `skein-store ${command}: ${error.code}: ${message}`;
}

/** Runs `body`; a SkeinError becomes one stderr line and exit status 2. */
export async function reportRefusals(
  command: string,
  io: Io,
  body: () => Promise<number>,
): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (!(error instanceof SkeinError)) throw error;
    io.err(refusalLine(command, error));
    return REFUSAL_EXIT;
  }
}

/** Rewrites a refusal's message with a leading sentence, keeping its code. */
export function prefixed(error: unknown, sentence: string): unknown {
  if (!(error instanceof SkeinError) || error.message.startsWith(sentence)) return error;
  return new SkeinError(error.code, `${sentence}: ${error.message}`, { cause: error });
}
