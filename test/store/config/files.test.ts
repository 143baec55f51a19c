import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { readConfigFile, readCredentialFile } from "../../../src/store/config/files.ts";
import {
  CONFIG_FILE_MAX_BYTES,
  CREDENTIAL_FILE_MAX_BYTES,
} from "../../../src/store/config/limits.ts";

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "skein-files-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SECRET = "s3cr3t-value";

describe("app credential files: one line, at most 4096 bytes, never shown", () => {
  const rows: [string, string | Buffer | "dir" | "absent", string | null][] = [
    ["one line", SECRET, SECRET],
    ["one line and a newline", `${SECRET}\n`, SECRET],
    ["one line and CRLF", `${SECRET}\r\n`, SECRET],
    ["4096 bytes", "x".repeat(CREDENTIAL_FILE_MAX_BYTES), "x".repeat(CREDENTIAL_FILE_MAX_BYTES)],
    ["4095 bytes and a newline", `${"x".repeat(4095)}\n`, "x".repeat(4095)],
    ["4097 bytes", "x".repeat(CREDENTIAL_FILE_MAX_BYTES + 1), "larger than 4096 bytes"],
    ["4096 bytes and a newline", `${"x".repeat(4096)}\n`, "larger than 4096 bytes"],
    ["two lines", `${SECRET}\nsecond-${SECRET}\n`, "exactly one line"],
    ["empty", "", "is empty"],
    ["only a newline", "\n", "is empty"],
    ["a control character", `${SECRET}\u0001`, "control character"],
    ["not UTF-8", Buffer.from([0xff, 0xfe, 0x41]), "not UTF-8"],
    ["a directory", "dir", "not a regular file"],
    ["absent", "absent", "cannot be read (ENOENT)"],
  ];
  for (const [name, content, outcome] of rows) {
    test(name, async () => {
      const path = join(dir, `credential-${name.replace(/\W+/g, "-")}`);
      if (content === "dir") await mkdir(path);
      else if (content !== "absent") await writeFile(path, content);
      if (
        outcome !== null &&
        (content === "dir" || content === "absent" || outcome.includes(" "))
      ) {
        const error = await readCredentialFile("idp.secret_file", path).then(
          () => assert.fail("expected a refusal"),
          (e: unknown) => e,
        );
        assert.ok(error instanceof SkeinError);
        assert.equal(error.code, "invalid_credential_file");
        assert.ok(
          error.message.startsWith(`idp.secret_file: credential file ${path} `),
          error.message,
        );
        assert.ok(error.message.includes(outcome), error.message);
        assert.ok(!error.message.includes(SECRET), "the contents are never shown");
      } else {
        assert.equal(await readCredentialFile("idp.secret_file", path), outcome);
      }
    });
  }
});

describe("configuration files: at most 1048576 bytes", () => {
  test("exactly the limit is read", async () => {
    const path = join(dir, "limit.json");
    await writeFile(path, " ".repeat(CONFIG_FILE_MAX_BYTES));
    assert.equal((await readConfigFile(path)).length, CONFIG_FILE_MAX_BYTES);
  });
  test("one byte more is refused", async () => {
    const path = join(dir, "over.json");
    await writeFile(path, " ".repeat(CONFIG_FILE_MAX_BYTES + 1));
    await assert.rejects(readConfigFile(path), (e: SkeinError) => {
      assert.equal(e.code, "config_file_too_large");
      assert.match(e.message, /larger than 1048576 bytes/);
      return true;
    });
  });
  test("a missing file is unreadable", async () => {
    await assert.rejects(readConfigFile(join(dir, "nope.json")), {
      code: "config_file_unreadable",
    });
  });
});
