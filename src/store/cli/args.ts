/**
 * Arguments shared by the client subcommands: whole numbers, refs (digits are a version
 * number, anything else a ref string for the store to resolve), the signing options of
 * committing commands (`--author`, `-m/--message`) and a JSON value given inline, on
 * stdin (`-`) or in a file (`--value-file`).
 */

import { readFile } from "node:fs/promises";
import { UsageError } from "../../common/cli.ts";
import { parseJsonArgument } from "./call.ts";

/** The largest value read from stdin or a file (the store's own frame bound decides later). */
export const VALUE_BYTES_MAX = 64 << 20;

export const branchOption = { branch: { type: "string" } } as const;

export const signOptions = {
  author: { type: "string" },
  message: { type: "string", short: "m" },
} as const;

export function whole(text: string | undefined, option: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n))
    throw new UsageError(`--${option} must be a whole number`);
  return n;
}

/** A ref from the command line: digits are a version number, anything else a ref string. */
export function refArg(text: string | undefined): number | string | undefined {
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (Number.isSafeInteger(n)) return n;
  }
  return text;
}

export function defined(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
}

/** `author` and `message` for a committing verb, from --author and -m. */
export function signed(values: { author?: string | undefined; message?: string | undefined }) {
  return defined({ author: values.author, message: values.message });
}

/** The JSON value: inline, `-` for stdin, or --value-file FILE (exactly one of them). */
export async function readValue(inline: string | undefined, file: string | undefined) {
  if ((inline === undefined) === (file === undefined)) {
    throw new UsageError("give the value as JSON, - (stdin) or --value-file FILE");
  }
  if (inline !== undefined && inline !== "-") return parseJsonArgument(inline, "the value");
  let text: string;
  if (file !== undefined) {
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      throw new UsageError(`--value-file ${file}: ${(error as NodeJS.ErrnoException).code}`);
    }
  } else {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      size += (chunk as Buffer).length;
      if (size > VALUE_BYTES_MAX)
        throw new UsageError(`stdin holds more than ${VALUE_BYTES_MAX} bytes`);
      chunks.push(chunk as Buffer);
    }
    text = Buffer.concat(chunks).toString("utf8");
  }
  if (Buffer.byteLength(text) > VALUE_BYTES_MAX) {
    throw new UsageError(`the value is larger than ${VALUE_BYTES_MAX} bytes`);
  }
  return parseJsonArgument(text, file === undefined ? "stdin" : `--value-file ${file}`);
}
