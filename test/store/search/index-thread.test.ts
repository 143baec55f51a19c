/**
 * The index thread keeps the process alive while a call waits for it, and only then. At
 * close the search service awaits the thread's checkpoints after the socket server and
 * every timer are gone; an unreferenced thread let the process end under that await (the
 * checkpoint unwritten, the store never closed, its lock and socket left behind). A child
 * process with nothing but the thread and one call shows both halves: the call is answered
 * and the process then ends on its own, without a close.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

const CLIENT = new URL("../../../src/store/search/index-client.ts", import.meta.url).href;

const SCRIPT = `
import { IndexThread } from ${JSON.stringify(CLIENT)};
const thread = new IndexThread(1, () => {});
const hits = await thread.search("no-such-head", 1, new Float32Array(4), 1);
process.stdout.write(hits === undefined ? "miss" : "hits");
`;

test("a call keeps the process alive until the thread answers; an idle thread does not", async (t) => {
  // A file, not --eval: the thread inherits the process's flags, and --input-type is not
  // one a worker accepts.
  const dir = mkdtempSync(join(tmpdir(), "skein-index-thread-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, "one-call.mjs");
  writeFileSync(script, SCRIPT);
  const child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  // Exit code 13 is Node's "unsettled top-level await": the call was left unanswered.
  assert.equal(code, 0, `exit ${code}: ${err}`);
  assert.equal(out, "miss");
});
