/**
 * Passwords and client secrets are kept only as scrypt hashes (node:crypto), in the form
 * `scrypt$N$r$p$salt$hash` so the cost can change without breaking stored hashes. Checking
 * runs scrypt asynchronously (off the event loop) and compares in constant time. Generated
 * client secrets are 32 random bytes, base64url.
 */

import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { MAX_SECRET_FILE_BYTES } from "./bounds.ts";
import { idpError } from "./errors.ts";

/** scrypt cost: N=2^14, r=8, p=1 (the interactive-login parameters node and RFC 7914 use). */
const COST = { N: 16384, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

function derive(secret: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_BYTES, { N, r, p, maxmem: 256 * N * r }, (error, key) =>
      error === null ? resolve(key) : reject(error),
    );
  });
}

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(secret, salt, COST.N, COST.r, COST.p);
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** True when `secret` matches `stored`; false for any malformed stored hash. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const expected = Buffer.from(parts[5]!, "base64url");
  const key = await derive(secret, Buffer.from(parts[4]!, "base64url"), N, r, p);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

export function generateSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Reads a one-line secret file (trailing newline dropped). The message names the file and
 * the rule broken, never the contents. */
export function readSecretFile(file: string, minBytes = 1): string {
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_SECRET_FILE_BYTES + 2) {
      throw idpError(
        "secret_file_invalid",
        `${file} is larger than ${MAX_SECRET_FILE_BYTES} bytes`,
      );
    }
    text = bytes.toString("utf8");
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "secret_file_invalid") {
      throw error;
    }
    throw idpError("secret_file_invalid", `${file} cannot be read`);
  }
  const line = text.replace(/\r?\n$/, "");
  const bytes = Buffer.byteLength(line);
  if (/[\r\n]/.test(line)) throw idpError("secret_file_invalid", `${file} must hold one line`);
  if (bytes > MAX_SECRET_FILE_BYTES) {
    throw idpError("secret_file_invalid", `${file} is larger than ${MAX_SECRET_FILE_BYTES} bytes`);
  }
  if (bytes < minBytes) {
    throw idpError("secret_file_invalid", `${file} must hold at least ${minBytes} bytes`);
  }
  return line;
}
