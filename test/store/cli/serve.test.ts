import assert from "node:assert/strict";
import { chmod, chown, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { serveCommand } from "../../../src/store/cli/serve.ts";
import { UNIX_SOCKET_PATH_MAX_BYTES } from "../../../src/store/config/limits.ts";
import { STORE_MANIFEST } from "../../../src/store/startup/data-dir.ts";
import {
  assertRefusal,
  STORE_CORE as CORE,
  STORE_CREATE as CREATE,
  runCommand,
  snapshot,
  tempRoot,
} from "./harness.ts";

const root = tempRoot("skein-serve-");

interface Case {
  readonly name: string;
  readonly args?: (file: string) => string[];
  /** Builds the case's tree under `dir`; returns the service file's value (or raw text). */
  readonly setup: (dir: string) => Promise<unknown>;
  readonly env?: (dir: string) => Record<string, string>;
  readonly code: string;
  readonly text: string;
  readonly notShown?: string;
}

const privateDir = async (path: string, mode = 0o700) => {
  await mkdir(path, { recursive: true });
  await chmod(path, mode);
  return path;
};
const existingStore = async (path: string) => {
  await mkdir(path, { recursive: true });
  await writeFile(join(path, STORE_MANIFEST), '{"format":"skein-store","version":1}');
  return path;
};

const otherUser = async (path: string) => {
  await privateDir(path);
  if (process.getuid?.() === 0) await chown(path, 65534, 65534);
  else return "/"; // a directory this user does not own
  return path;
};

const cases: Case[] = [
  {
    name: "--create without a create section",
    args: (f) => [f, "--create"],
    setup: async (d) => ({ ...CORE, data_dir: join(d, "store") }),
    code: "create_section_required",
    text: "create: --create needs a create section",
  },
  {
    name: "--create under a missing parent",
    args: (f) => [f, "--create"],
    setup: async (d) => ({ ...CORE, create: CREATE, data_dir: join(d, "no", "store") }),
    code: "invalid_data_dir",
    text: "data_dir: parent",
  },
  {
    name: "--create on an existing directory",
    args: (f) => [f, "--create"],
    setup: async (d) => ({ ...CORE, create: CREATE, data_dir: await existingStore(join(d, "s")) }),
    code: "invalid_data_dir",
    text: "already exists",
  },
  {
    name: "--create on an existing file",
    args: (f) => [f, "--create"],
    setup: async (d) => {
      await writeFile(join(d, "file"), "x");
      return { ...CORE, create: CREATE, data_dir: join(d, "file") };
    },
    code: "invalid_data_dir",
    text: "already exists",
  },
  {
    name: "no --create and no store",
    setup: async (d) => ({ ...CORE, data_dir: join(d, "store") }),
    code: "invalid_data_dir",
    text: "--create",
  },
  {
    name: "no --create on a directory that is not a store",
    setup: async (d) => ({ ...CORE, data_dir: await privateDir(join(d, "plain")) }),
    code: "invalid_data_dir",
    text: "is not a store",
  },
  {
    name: "relative data_dir",
    setup: async () => ({ ...CORE, data_dir: "store" }),
    code: "invalid_data_dir",
    text: "data_dir: data_dir and socket must be absolute",
  },
  {
    name: "relative socket",
    setup: async (d) => ({
      ...CORE,
      data_dir: await existingStore(join(d, "s")),
      socket: "s.sock",
    }),
    code: "invalid_socket",
    text: "socket: data_dir and socket must be absolute",
  },
  {
    name: "socket parent missing",
    setup: async (d) => ({
      ...CORE,
      data_dir: await existingStore(join(d, "s")),
      socket: join(d, "nodir", "s.sock"),
    }),
    code: "invalid_socket",
    text: "does not exist",
  },
  {
    name: "socket parent mode 0755",
    setup: async (d) => ({
      ...CORE,
      data_dir: await existingStore(join(d, "s")),
      socket: join(await privateDir(join(d, "open"), 0o755), "s.sock"),
    }),
    code: "invalid_socket",
    text: "has mode 0755, needs 0700",
  },
  {
    name: "socket parent mode 0710",
    setup: async (d) => ({
      ...CORE,
      data_dir: await existingStore(join(d, "s")),
      socket: join(await privateDir(join(d, "group"), 0o710), "s.sock"),
    }),
    code: "invalid_socket",
    text: "has mode 0710",
  },
  {
    name: "socket parent owned by another user",
    setup: async (d) => ({
      ...CORE,
      data_dir: await existingStore(join(d, "s")),
      socket: join(await otherUser(join(d, "theirs")), "s.sock"),
    }),
    code: "invalid_socket",
    text: "is not owned by this user",
  },
  {
    name: "socket path is a regular file",
    setup: async (d) => {
      const dir = await privateDir(join(d, "sock"));
      await writeFile(join(dir, "s.sock"), "");
      return { ...CORE, data_dir: await existingStore(join(d, "s")), socket: join(dir, "s.sock") };
    },
    code: "invalid_socket",
    text: "is not a socket",
  },
  {
    name: "socket path too long for a Unix socket address",
    setup: async (d) => ({
      ...CORE,
      data_dir: await existingStore(join(d, "s")),
      socket: join(await privateDir(join(d, "sock")), `${"s".repeat(120)}.sock`),
    }),
    code: "endpoint_too_long",
    text: "socket: ",
  },
  {
    name: "socket path one byte over the Unix socket address",
    setup: async (d) => {
      const dir = await privateDir(join(d, "sock"));
      const path = join(dir, "s".repeat(UNIX_SOCKET_PATH_MAX_BYTES - dir.length));
      assert.equal(Buffer.byteLength(path), UNIX_SOCKET_PATH_MAX_BYTES + 1);
      return { ...CORE, data_dir: await existingStore(join(d, "s")), socket: path };
    },
    code: "endpoint_too_long",
    text: `is ${UNIX_SOCKET_PATH_MAX_BYTES + 1} bytes`,
  },
  {
    name: "resolved socket too long (a long name)",
    setup: async (d) => ({
      ...CORE,
      data_dir: await existingStore(join(d, "s")),
      name: "n".repeat(120),
    }),
    code: "endpoint_too_long",
    text: "a Unix socket address holds at most",
  },
  {
    name: "XDG_RUNTIME_DIR relative",
    setup: async (d) => ({ ...CORE, data_dir: await existingStore(join(d, "s")) }),
    env: () => ({ XDG_RUNTIME_DIR: "run" }),
    code: "invalid_runtime_location",
    text: "XDG_RUNTIME_DIR must be an absolute path",
  },
  {
    name: "XDG_RUNTIME_DIR missing",
    setup: async (d) => ({ ...CORE, data_dir: await existingStore(join(d, "s")) }),
    env: (d) => ({ XDG_RUNTIME_DIR: join(d, "no-run") }),
    code: "invalid_runtime_location",
    text: "does not exist",
  },
  {
    name: "XDG_RUNTIME_DIR mode 0755",
    setup: async (d) => {
      await privateDir(join(d, "run"), 0o755);
      return { ...CORE, data_dir: await existingStore(join(d, "s")) };
    },
    code: "invalid_runtime_location",
    text: "has mode 0755",
  },
  {
    name: "runtime directory mode 0755",
    setup: async (d) => {
      await privateDir(join(d, "run", "skein-store"), 0o755);
      return { ...CORE, data_dir: await existingStore(join(d, "s")) };
    },
    code: "invalid_runtime_location",
    text: "has mode 0755",
  },
  {
    name: "runtime directory is a symbolic link",
    setup: async (d) => {
      await privateDir(join(d, "elsewhere"));
      await symlink(join(d, "elsewhere"), join(d, "run", "skein-store"));
      return { ...CORE, data_dir: await existingStore(join(d, "s")) };
    },
    code: "invalid_runtime_location",
    text: "is a symbolic link",
  },
  {
    name: "runtime directory is a file",
    setup: async (d) => {
      await writeFile(join(d, "run", "skein-store"), "");
      return { ...CORE, data_dir: await existingStore(join(d, "s")) };
    },
    code: "invalid_runtime_location",
    text: "is not a directory",
  },
  {
    name: "name refused while decoding",
    setup: async (d) => ({ ...CORE, data_dir: await existingStore(join(d, "s")), name: "a/b" }),
    code: "invalid_store_name",
    text: "name: must not contain /",
  },
  {
    name: "default name from a data directory basename of 129 bytes",
    args: (f) => [f, "--create"],
    setup: async (d) => ({ ...CORE, create: CREATE, data_dir: join(d, "x".repeat(129)) }),
    code: "invalid_store_name",
    text: "name: the default name",
  },
  {
    name: "placement credential file of two lines",
    setup: async (d) => {
      await writeFile(join(d, "app.cred"), "first-secret\nsecond-secret\n");
      return {
        ...CORE,
        data_dir: await existingStore(join(d, "s")),
        idp: {
          issuer: "https://idp.example",
          database: "db",
          placement_credential_file: join(d, "app.cred"),
        },
      };
    },
    code: "invalid_credential_file",
    text: "idp.placement_credential_file: credential file",
    notShown: "secret",
  },
  {
    name: "the service file is not JSON",
    setup: async () => "{ not json",
    code: "decode_refused",
    text: "not valid JSON",
  },
  {
    name: "the service file is too large",
    setup: async () => " ".repeat(1048577),
    code: "config_file_too_large",
    text: "larger than 1048576 bytes",
  },
  {
    name: "the service file is missing",
    args: (f) => [join(f, "..", "absent.json")],
    setup: async () => ({}),
    code: "config_file_unreadable",
    text: "absent.json",
  },
  {
    name: "a missing required field",
    setup: async (d) => ({ data_dir: join(d, "s") }),
    code: "decode_refused",
    text: "branch_cache_bytes_per_shard: missing required field",
  },
];

describe("skein-store serve: every start-up refusal is one line, exit 2, nothing created", () => {
  let i = 0;
  for (const c of cases) {
    test(c.name, async () => {
      const dir = join(root, `case-${i++}`);
      await privateDir(join(dir, "run"));
      const content = await c.setup(dir);
      const file = join(dir, "service.json");
      await writeFile(file, typeof content === "string" ? content : JSON.stringify(content));
      const env = c.env?.(dir) ?? { XDG_RUNTIME_DIR: join(dir, "run") };
      const before = await snapshot(dir);
      const r = await runCommand(serveCommand({ env }), c.args?.(file) ?? [file]);
      assertRefusal(r, "serve", c.code, c.text);
      if (c.notShown !== undefined) assert.ok(!r.err.includes(c.notShown), r.err);
      assert.deepEqual(await snapshot(dir), before, "a refusal creates nothing");
    });
  }

  test("XDG_RUNTIME_DIR owned by another user", async () => {
    const dir = join(root, "case-xdg-owner");
    await privateDir(dir);
    const theirs = await otherUser(join(dir, "theirs"));
    const file = join(dir, "service.json");
    await writeFile(
      file,
      JSON.stringify({ ...CORE, data_dir: await existingStore(join(dir, "s")) }),
    );
    const r = await runCommand(serveCommand({ env: { XDG_RUNTIME_DIR: theirs } }), [file]);
    assertRefusal(r, "serve", "invalid_runtime_location", "is not owned by this user");
  });

  test("no FILE is a usage error", async () => {
    const r = await runCommand(serveCommand(), []);
    assert.equal(r.status, 2);
  });
});
