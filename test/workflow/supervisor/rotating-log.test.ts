// Deployment logs are size-bounded: a real worker-like child that writes far more than the
// bound leaves at most `keep` rotated files, none over `maxBytes`, the newest output in the
// live file; and the supervised child never inherits the server's SKEIN_TOKEN.

import assert from "node:assert/strict";
import { existsSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { processLauncher } from "../../../src/workflow/supervisor/launcher.ts";
import { RotatingLog } from "../../../src/workflow/supervisor/rotating-log.ts";
import { until } from "../../support/until.ts";

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "skein-logs-"));
  dirs.push(dir);
  return dir;
}

describe("RotatingLog", () => {
  const rows: [maxBytes: number, keep: number, writes: number, chunk: number, files: string[]][] = [
    [1000, 2, 10, 300, ["", ".1", ".2"]],
    [1000, 1, 10, 300, ["", ".1"]],
    [1000, 3, 2, 300, [""]],
    [100, 2, 3, 500, ["", ".1", ".2"]],
  ];
  for (const [maxBytes, keep, writes, chunk, files] of rows) {
    test(`max ${maxBytes} B, keep ${keep}: ${writes} writes of ${chunk} B leave ${files.length} file(s), each within the bound`, async () => {
      const path = join(await scratch(), "logs", "w.log");
      const log = new RotatingLog(path, { maxBytes, keep });
      for (let i = 0; i < writes; i++) log.write(Buffer.from(`${i}`.padEnd(chunk, ".")));
      log.close();
      for (const suffix of files) {
        assert.ok(existsSync(path + suffix), `${suffix} missing`);
        assert.ok(statSync(path + suffix).size <= maxBytes, `${suffix} over the bound`);
      }
      assert.ok(!existsSync(`${path}.${keep + 1}`), "more rotated files than keep");
      // The newest write is in the live file (a chunk over the bound keeps only its tail).
      if (chunk <= maxBytes) assert.ok((await readFile(path, "utf8")).includes(`${writes - 1}.`));
    });
  }

  test("reopening continues the file's size (rotation counts what is already there)", async () => {
    const path = join(await scratch(), "w.log");
    const first = new RotatingLog(path, { maxBytes: 100, keep: 1 });
    first.write(Buffer.alloc(80, "a"));
    first.close();
    const second = new RotatingLog(path, { maxBytes: 100, keep: 1 });
    second.write(Buffer.alloc(40, "b"));
    second.close();
    assert.equal(await readFile(`${path}.1`, "utf8"), "a".repeat(80));
    assert.equal(await readFile(path, "utf8"), "b".repeat(40));
  });
});

describe("the launcher's child output goes through the bounded log", () => {
  test("a child writing 200 KiB to stdout and stderr leaves at most 3 × 16 KiB", async () => {
    const dir = await scratch();
    const logFile = join(dir, "logs", "chatty.log");
    const previous = process.env.SKEIN_TOKEN;
    process.env.SKEIN_TOKEN = "the-servers-own-bearer";
    try {
      const child = await processLauncher.launch({
        name: "chatty",
        revision: 1,
        command: process.execPath,
        args: [
          "-e",
          "for (let i = 0; i < 200; i++) { (i % 2 ? process.stderr : process.stdout).write(('line ' + i + ' ').padEnd(1023, '.') + '\\n'); }" +
            "process.stdout.write('token:' + (process.env.SKEIN_TOKEN ?? 'none') + '\\n');",
        ],
        env: {},
        logFile,
        logLimits: { maxBytes: 16 * 1024, keep: 2 },
      });
      assert.deepEqual((await child.exited).code, 0);
    } finally {
      if (previous === undefined) delete process.env.SKEIN_TOKEN;
      else process.env.SKEIN_TOKEN = previous;
    }
    const all = async () => {
      let text = "";
      for (const suffix of [".2", ".1", ""]) {
        text += await readFile(logFile + suffix, "utf8").catch(() => "");
      }
      return text;
    };
    // The pipes drain after the exit; wait for the last lines of both streams.
    const kept = await until("the last lines of both streams", async () => {
      const text = await all();
      return text.includes("token:") && text.includes("line 199 ") ? text : undefined;
    });
    assert.match(kept, /token:none\n/, "the child did not inherit SKEIN_TOKEN");
    assert.doesNotMatch(kept, /the-servers-own-bearer/);
    let total = 0;
    for (const suffix of ["", ".1", ".2"]) {
      const size = statSync(logFile + suffix).size;
      assert.ok(size <= 16 * 1024, `${suffix}: ${size} B`);
      total += size;
    }
    assert.ok(!existsSync(`${logFile}.3`));
    // The newest lines of both streams are kept; the oldest went with the rotations.
    assert.match(kept, /line 198 /);
    assert.match(kept, /line 199 /);
    assert.doesNotMatch(kept, /line 0 /);
    assert.ok(total < 200 * 1024, "older output was dropped, not kept");
  });
});
