/**
 * The skein-idp management commands, run as real processes on a temp data directory: what
 * each prints, the refusals (one line `skein-idp CMD: CODE: message`, exit 2) and usage
 * mistakes (exit 2), secret files never echoed, and the data directory's modes (0700, keys
 * 0600) after a real `serve`.
 */

import assert from "node:assert/strict";
import { chmod, mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { idpCli, idpHome, startIdp } from "./fixture.ts";

describe("skein-idp management commands (real processes)", async () => {
  const home = await idpHome();
  const d = ["--data-dir", home.dataDir];

  const refused = async (args: string[], pattern: RegExp) => {
    const result = await idpCli(args);
    assert.equal(result.status, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, pattern);
    return result;
  };

  test("--help lists the commands; --version prints the version", async () => {
    const help = await idpCli(["--help"]);
    assert.equal(help.status, 0);
    for (const name of ["serve", "user", "group", "client", "grant", "revoke", "placement"]) {
      assert.match(help.stdout, new RegExp(`\\n  ${name} `));
    }
    assert.match((await idpCli(["--version"])).stdout, /^\d+\.\d+\.\d+/);
  });

  test("user add hashes the password from a file; refusals never show it", async () => {
    const file = await home.file("a-long-password\n");
    const added = await idpCli(["user", "add", ...d, "alice", "--password-file", file]);
    assert.deepEqual(JSON.parse(added.stdout), { user: "alice", created: true });
    await refused(
      ["user", "add", ...d, "alice", "--password-file", file],
      /^skein-idp user: user_exists: /,
    );
    const short = await home.file("short\n");
    const tooShort = await refused(
      ["user", "add", ...d, "bob", "--password-file", short],
      /^skein-idp user: secret_file_invalid: .* must hold at least 8 bytes/,
    );
    assert.ok(!tooShort.stderr.includes("short\n") && !tooShort.stderr.includes(": short"));
    const twoLines = await home.file("first-line-password\nsecond-line-password\n");
    const lines = await refused(
      ["user", "add", ...d, "bob", "--password-file", twoLines],
      /secret_file_invalid: .* must hold one line/,
    );
    assert.ok(!lines.stderr.includes("first-line-password"));
    await refused(
      ["user", "add", ...d, "bob", "--password-file", join(home.root, "missing")],
      /cannot be read/,
    );
    await refused(["user", "add", ...d, "bob"], /--password-file FILE is required/);
    await refused(["user", "add", ...d, "b:ob", "--password-file", file], /NAME must be letters/);
    await refused(["user", "remove", ...d, "bob"], /expected one of add/);
    await refused(["user", "add", "bob", "--password-file", file], /--data-dir DIR is required/);
  });

  test("client add prints a generated secret once, or takes one from a file", async () => {
    const generated = await idpCli(["client", "add", ...d, "svc", "--app", "shop"]);
    assert.equal(generated.status, 0);
    assert.match(generated.stdout, /^[A-Za-z0-9_-]{43}\n$/);
    const file = await home.file("given-secret\n");
    const given = await idpCli([
      "client",
      "add",
      ...d,
      "web",
      "--redirect",
      "http://127.0.0.1:1/cb",
      "--secret-file",
      file,
    ]);
    assert.deepEqual(JSON.parse(given.stdout), { client: "web", created: true });
    await refused(["client", "add", ...d, "svc"], /^skein-idp client: client_exists: /);
    await refused(["client", "add", ...d, "x", "--app", "no/db"], /--app DATABASE must be/);
    await refused(["client", "add", ...d, "x", "--redirect", "not a uri"], /--redirect must be/);
    await refused(
      ["client", "add", ...d, "x", "--redirect", "http://h/cb#frag"],
      /without a fragment/,
    );
  });

  test("group add and group member", async () => {
    assert.deepEqual(JSON.parse(await home.run("group", "add", "team")), {
      group: "team",
      created: true,
    });
    await refused(["group", "add", ...d, "team"], /group_exists/);
    assert.deepEqual(JSON.parse(await home.run("group", "member", "team", "alice")), {
      group: "team",
      member: "user:alice",
      added: true,
    });
    assert.equal(JSON.parse(await home.run("group", "member", "team", "user:alice")).added, false);
    assert.equal(JSON.parse(await home.run("group", "member", "team", "client:svc")).added, true);
    await refused(["group", "member", ...d, "nope", "alice"], /unknown_group/);
    await refused(["group", "member", ...d, "team", "ghost"], /unknown_subject: no user:ghost/);
    await refused(
      ["group", "member", ...d, "team", "group:team"],
      /a member is NAME, user:NAME or client:ID/,
    );
  });

  test("grant and revoke: exactly one grant each, resources checked", async () => {
    const g = (subject: string, action: string, resource: string) => [
      ...d,
      "--subject",
      subject,
      "--action",
      action,
      "--resource",
      resource,
    ];
    const grant = async (...args: string[]) =>
      JSON.parse((await idpCli(["grant", ...args])).stdout);
    const revoke = async (...args: string[]) =>
      JSON.parse((await idpCli(["revoke", ...args])).stdout);
    assert.deepEqual(await grant(...g("user:alice", "read", "db/shop/c/notes/b/main/p/a/b")), {
      granted: true,
      created: true,
    });
    assert.deepEqual(await grant(...g("user:alice", "read", "db/shop/c/notes/b/main/p/a/b")), {
      granted: true,
      created: false,
    });
    assert.equal((await grant(...g("group:team", "admin", "db/shop"))).created, true);
    assert.equal((await grant(...g("client:svc", "write", "db/shop/c/notes"))).created, true);
    // Revoke removes exactly that grant: another level or resource is another grant.
    assert.deepEqual(await revoke(...g("user:alice", "write", "db/shop/c/notes/b/main/p/a/b")), {
      revoked: false,
    });
    assert.deepEqual(await revoke(...g("user:alice", "read", "db/shop/c/notes/b/main/p/a")), {
      revoked: false,
    });
    assert.deepEqual(await revoke(...g("user:alice", "read", "db/shop/c/notes/b/main/p/a/b")), {
      revoked: true,
    });
    assert.deepEqual(await revoke(...g("user:alice", "read", "db/shop/c/notes/b/main/p/a/b")), {
      revoked: false,
    });
    await refused(
      ["grant", ...g("user:ghost", "read", "db/shop")],
      /^skein-idp grant: unknown_subject: /,
    );
    await refused(["grant", ...g("alice", "read", "db/shop")], /--subject must be user:NAME/);
    await refused(
      ["grant", ...g("user:alice", "own", "db/shop")],
      /--action must be read, write or admin/,
    );
    for (const bad of [
      "shop",
      "db/",
      "db/a.b",
      "db/shop/x/notes",
      "db/shop/c/",
      "db/shop/c/n/b",
      "db/shop/c/n/b/m/q/x",
      // A branch pattern is a name then one `*`, at the end.
      "db/shop/c/n/b/*",
      "db/shop/c/n/b/a*b",
      "db/shop/c/n/b/a**",
    ]) {
      await refused(["grant", ...g("user:alice", "read", bad)], /invalid_resource: resource /);
    }
    await refused(["grant", ...d, "--subject", "user:alice"], /are required/);
  });

  test("placement freeze and thaw: each says whether it changed anything", async () => {
    const run = async (...args: string[]) => JSON.parse((await idpCli(args)).stdout) as unknown;
    assert.deepEqual(await run("placement", "freeze", ...d, "shop"), {
      database: "shop",
      frozen: true,
      changed: true,
    });
    assert.deepEqual(await run("placement", "freeze", ...d, "shop"), {
      database: "shop",
      frozen: true,
      changed: false,
    });
    assert.deepEqual(await run("placement", "thaw", ...d, "shop"), {
      database: "shop",
      frozen: false,
      changed: true,
    });
    assert.deepEqual(await run("placement", "thaw", ...d, "shop"), {
      database: "shop",
      frozen: false,
      changed: false,
    });
    await refused(["placement", "freeze", ...d, "sh/op"], /DATABASE must be letters/);
    await refused(["placement", "melt", ...d, "shop"], /expected one of freeze, thaw/);
  });

  test("serve keeps its data directory private; a readable one is refused", async () => {
    const idp = await startIdp(home.dataDir);
    assert.equal((await stat(home.dataDir)).mode & 0o777, 0o700);
    assert.equal((await stat(join(home.dataDir, "keys.json"))).mode & 0o777, 0o600);
    await idp.stop();
    const open = join(home.root, "open");
    await mkdir(open, { mode: 0o755 });
    await chmod(open, 0o755);
    await refused(
      ["serve", "--data-dir", open, "--listen", "127.0.0.1:0"],
      /data_dir_unusable: .* \(mode 0700\); it is 755/,
    );
    await chmod(join(home.dataDir, "keys.json"), 0o644);
    await refused(
      ["serve", ...d, "--listen", "127.0.0.1:0"],
      /keys_unusable: .* must have mode 0600/,
    );
    await chmod(join(home.dataDir, "keys.json"), 0o600);
    await refused(["serve", ...d, "--listen", "nowhere"], /--listen must be HOST:PORT/);
    await refused(
      ["serve", ...d, "--issuer", "http://h/path"],
      /--issuer must be an http or https origin/,
    );
  });
});
