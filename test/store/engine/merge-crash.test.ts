// A merge after SIGKILL: a real store process is killed in the middle of a stream of
// commits on both branches (merges among them); reopened, every acknowledged commit is
// there, the version graph is whole, and merging the branch gives exactly the three-way
// result of what survived.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { StoreClient } from "../../../src/store/client/client.ts";
import { openStore, type Store } from "../../../src/store/engine/index.ts";
import { startChild } from "./child.ts";
import { engineOptions } from "./fixture.ts";

function all(store: Store, ref: string | number): Map<string, unknown> {
  const out = new Map<string, unknown>();
  let after: string | undefined;
  for (;;) {
    const page = store.list(
      { collection: "c", branch: "main", version: ref },
      { after, limit: 500 },
    );
    for (const row of page.rows) out.set(row.key, row.value);
    if (page.next === null) return out;
    after = page.next;
  }
}

test("SIGKILL mid-commit, then merge: the merge of what survived is exact", async () => {
  const parent = mkdtempSync(join(tmpdir(), "skein-merge-crash-"));
  after(() => rmSync(parent, { recursive: true, force: true }));
  const dir = join(parent, "data");
  const socketPath = join(parent, "s.sock");
  const child = await startChild(dir, socketPath);
  const client = await StoreClient.connect(socketPath, { client: "crash" });
  await client.call("collections.create", { collection: "c" });
  await client.call("document.put", { collection: "c", key: "shared", value: 0 });
  await client.call("branches.create", { collection: "c", branch: "agent" });
  const acknowledged = { main: [] as number[], agent: [] as number[] };
  let sent = 0;
  let merges = 0;
  // Writers on both branches (main writes m*, agent writes a* keys: no conflicts), and
  // a merge of agent into main every 40 commits, until the kill.
  const writer = async (branch: "main" | "agent") => {
    for (;;) {
      const n = sent++;
      try {
        await client.call("document.put", {
          collection: "c",
          branch,
          key: `${branch[0]}${String(n).padStart(6, "0")}`,
          value: { n, pad: "c".repeat(100) },
          message: `commit ${n}`,
        });
        acknowledged[branch].push(n);
        if (n % 40 === 0) {
          await client.call("branches.merge", { collection: "c", from: "agent", into: "main" });
          merges++;
        }
      } catch {
        return;
      }
      if (acknowledged.main.length + acknowledged.agent.length === 300) child.kill("SIGKILL");
    }
  };
  await Promise.all([writer("main"), writer("main"), writer("agent"), writer("agent")]);
  await new Promise((resolve) =>
    child.exitCode === null ? child.once("exit", resolve) : resolve(null),
  );
  await client.close();
  assert.ok(merges > 0, "merges ran before the kill");

  const store = openStore(engineOptions(dir));
  try {
    const ours = all(store, "main");
    const theirs = all(store, "agent");
    for (const n of acknowledged.main) assert.ok(ours.has(`m${String(n).padStart(6, "0")}`));
    for (const n of acknowledged.agent) assert.ok(theirs.has(`a${String(n).padStart(6, "0")}`));
    const result = store.merge("c", "agent", "main", {
      by: { author: "t", message: "after the crash" },
    });
    assert.notEqual(result.outcome, "up_to_date");
    assert.equal(result.conflict_count, 0);
    // Disjoint key sets: the three-way result is the union.
    const merged = all(store, "main");
    assert.deepEqual(merged, new Map([...ours, ...theirs]));
    assert.equal(store.history("c", "main", undefined, 1).rows[0]!.message, "after the crash");
  } finally {
    await store.close();
  }
});
