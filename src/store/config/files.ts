/**
 * Bounded readers for the files the store's commands read before they serve: configuration
 * files (at most 1048576 bytes) and app credential files (one line, at most 4096 bytes).
 * A file is opened once, checked to be a regular file, and read no further than its bound,
 * so a huge or growing file cannot exhaust memory. A credential file's contents never
 * appear in a refusal: refusals name the field and the file only.
 */

import { open } from "node:fs/promises";
import { SkeinError } from "../../common/errors.ts";
import type { ConfigRefusalCode } from "../errors.ts";
import { CONFIG_FILE_MAX_BYTES, CREDENTIAL_FILE_MAX_BYTES } from "./limits.ts";

export const CONFIG_FILE_UNREADABLE = "config_file_unreadable" satisfies ConfigRefusalCode;
export const CONFIG_FILE_TOO_LARGE = "config_file_too_large" satisfies ConfigRefusalCode;
export const INVALID_CREDENTIAL_FILE = "invalid_credential_file" satisfies ConfigRefusalCode;

type ReadResult = { ok: true; bytes: Buffer } | { ok: false; reason: string; tooLarge?: boolean };

async function readBounded(path: string, maxBytes: number): Promise<ReadResult> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    return { ok: false, reason: `cannot be read (${(error as NodeJS.ErrnoException).code})` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, reason: "is not a regular file" };
    // Read one byte past the bound so a file that grew since stat is still caught.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) {
      return { ok: false, reason: `is larger than ${maxBytes} bytes`, tooLarge: true };
    }
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (error) {
    return { ok: false, reason: `cannot be read (${(error as NodeJS.ErrnoException).code})` };
  } finally {
    await handle.close();
  }
}

/** Reads a configuration file of at most `maxBytes` as UTF-8 text. Throws SkeinError. */
export async function readConfigFile(
  path: string,
  maxBytes: number = CONFIG_FILE_MAX_BYTES,
): Promise<string> {
  const read = await readBounded(path, maxBytes);
  if (!read.ok) {
    const code = read.tooLarge ? CONFIG_FILE_TOO_LARGE : CONFIG_FILE_UNREADABLE;
    throw new SkeinError(code, `configuration file ${path} ${read.reason}`);
  }
  const text = new TextDecoder("utf-8", { fatal: false }).decode(read.bytes);
  return text;
}

/**
 * Reads an app credential: one non-empty line (a final newline is allowed) of at most 4096
 * bytes, without control characters. Throws SkeinError naming `field` and the file only.
 */
export async function readCredentialFile(field: string, path: string): Promise<string> {
  const fail = (reason: string): never => {
    throw new SkeinError(INVALID_CREDENTIAL_FILE, `${field}: credential file ${path} ${reason}`);
  };
  const read = await readBounded(path, CREDENTIAL_FILE_MAX_BYTES);
  if (!read.ok) return fail(read.reason);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(read.bytes);
  } catch {
    return fail("is not UTF-8 text");
  }
  const line = text.endsWith("\r\n")
    ? text.slice(0, -2)
    : text.endsWith("\n")
      ? text.slice(0, -1)
      : text;
  if (line.length === 0) return fail("is empty");
  if (line.includes("\n") || line.includes("\r")) return fail("must hold exactly one line");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are the rule
  if (/[\u0000-\u001f\u007f]/.test(line)) return fail("holds a control character");
  return line;
}
