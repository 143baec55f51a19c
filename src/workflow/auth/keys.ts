/**
 * The server's Ed25519 signing key: generated on first start into the data directory as a
 * PKCS#8 PEM file readable only by its owner (mode 0600), loaded on every later start and by
 * `skein token issue`. Bearer tokens are signed with it; the public half verifies them.
 */

import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { workflowError } from "../errors.ts";

export const SIGNING_KEY_FILE = "signing-key.pem";

export interface SigningKey {
  readonly path: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

export function signingKeyPath(dataDir: string): string {
  return join(dataDir, SIGNING_KEY_FILE);
}

/** Loads the key, generating it first when absent; `created` says which happened. */
export async function ensureSigningKey(
  dataDir: string,
): Promise<{ key: SigningKey; created: boolean }> {
  const path = signingKeyPath(dataDir);
  if (!existsSync(path)) {
    const { privateKey } = generateKeyPairSync("ed25519");
    const pem = privateKey.export({ type: "pkcs8", format: "pem" });
    try {
      // `wx`: never overwrite a key another start wrote meanwhile; tokens it signed stay valid.
      await writeFile(path, pem, { flag: "wx", mode: 0o600 });
      return { key: { path, privateKey, publicKey: createPublicKey(privateKey) }, created: true };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw workflowError("storage_unavailable", `cannot write the signing key ${path}`, error);
      }
    }
  }
  return { key: await loadSigningKey(dataDir), created: false };
}

/** Loads an existing key; refuses with a hint when the server never started here. */
export async function loadSigningKey(dataDir: string): Promise<SigningKey> {
  const path = signingKeyPath(dataDir);
  let pem: string;
  try {
    pem = await readFile(path, "utf8");
  } catch (error) {
    throw workflowError(
      "config_invalid",
      `no signing key at ${path}: start \`skein serve\` once with this configuration`,
      error,
    );
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw workflowError("config_invalid", `${path} is not a PEM private key`, error);
  }
  if (privateKey.asymmetricKeyType !== "ed25519") {
    throw workflowError("config_invalid", `${path} is not an Ed25519 private key`);
  }
  return { path, privateKey, publicKey: createPublicKey(privateKey) };
}
