import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { ADMIN_TOKEN_FILE, ensureAdminToken } from "../../../src/workflow/auth/admin-token.ts";
import {
  ensureSigningKey,
  loadSigningKey,
  SIGNING_KEY_FILE,
} from "../../../src/workflow/auth/keys.ts";
import { createVerifier } from "../../../src/workflow/auth/tokens.ts";

const dirs: string[] = [];
async function fresh(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "skein-keys-"));
  dirs.push(dir);
  return dir;
}
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const configInvalid = (error: unknown) =>
  error instanceof SkeinError && error.code === "config_invalid";

describe("signing key and admin token files", () => {
  test("the key is created once (mode 0600) and then loaded unchanged", async () => {
    const dir = await fresh();
    const first = await ensureSigningKey(dir);
    assert.equal(first.created, true);
    assert.equal((await stat(join(dir, SIGNING_KEY_FILE))).mode & 0o777, 0o600);
    const second = await ensureSigningKey(dir);
    assert.equal(second.created, false);
    assert.ok(first.key.publicKey.equals(second.key.publicKey));
  });

  test("the admin token (mode 0600) verifies with the key and has every grant", async () => {
    const dir = await fresh();
    const { key } = await ensureSigningKey(dir);
    assert.equal((await ensureAdminToken(dir, key.privateKey)).created, true);
    assert.equal((await stat(join(dir, ADMIN_TOKEN_FILE))).mode & 0o777, 0o600);
    const { readFile } = await import("node:fs/promises");
    const token = (await readFile(join(dir, ADMIN_TOKEN_FILE), "utf8")).trim();
    const p = await createVerifier(key.publicKey)(token);
    assert.deepEqual([p.subject, p.namespaces, p.deploy, p.worker], ["admin", "*", true, true]);
    assert.equal((await ensureAdminToken(dir, key.privateKey)).created, false);
    assert.equal((await readFile(join(dir, ADMIN_TOKEN_FILE), "utf8")).trim(), token);
  });

  test("no key file: config_invalid with a hint", async () => {
    await assert.rejects(loadSigningKey(await fresh()), configInvalid);
  });

  test("a key file that is not PEM: config_invalid", async () => {
    const dir = await fresh();
    await writeFile(join(dir, SIGNING_KEY_FILE), "not a key");
    await assert.rejects(loadSigningKey(dir), configInvalid);
  });

  test("a key of another type: config_invalid", async () => {
    const dir = await fresh();
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    await writeFile(
      join(dir, SIGNING_KEY_FILE),
      privateKey.export({ type: "pkcs8", format: "pem" }),
    );
    await assert.rejects(loadSigningKey(dir), configInvalid);
  });
});
