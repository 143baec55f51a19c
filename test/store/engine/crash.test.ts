import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { StoreClient } from "../../../src/store/client/client.ts";
import { openStore } from "../../../src/store/engine/index.ts";
import { startChild } from "./child.ts";
import { engineOptions } from "./fixture.ts";

test("SIGKILL during a stream of commits: reopening shows a prefix of them, none acknowledged missing", async () => {
  const parent = mkdtempSync(join(tmpdir(), "skein-crash-"));
  after(() => rmSync(parent, { recursive: true, force: true }));
  const dir = join(parent, "data");
  const socketPath = join(parent, "s.sock");
  const child = await startChild(dir, socketPath);
  const client = await StoreClient.connect(socketPath, { client: "crash" });
  await client.call("collections.create", { collection: "log" });

  const acknowledged: number[] = [];
  let sent = 0;
  // Several writers keep commits in flight so the kill lands mid-stream. The child serves
  // them through the socket server's commit pipeline: several are built and handed to
  // LMDB before the ones ahead of them are durable, which is what the prefix must survive.
  const writer = async () => {
    for (;;) {
      const n = sent++;
      try {
        await client.put("log", [
          { key: `k${String(n).padStart(6, "0")}`, value: { n, pad: "c".repeat(120) } },
        ]);
      } catch {
        return;
      }
      acknowledged.push(n);
      if (acknowledged.length === 150) child.kill("SIGKILL");
    }
  };
  await Promise.all([writer(), writer(), writer(), writer()]);
  await new Promise((resolve) =>
    child.exitCode === null ? child.once("exit", resolve) : resolve(null),
  );
  await client.close();

  const store = openStore(engineOptions(dir));
  try {
    const present = new Set<number>();
    for (let page = store.list({ collection: "log", branch: "main" }, { limit: 500 }); ; ) {
      for (const row of page.rows) present.add((row.value as { n: number }).n);
      if (page.next === null) break;
      page = store.list({ collection: "log", branch: "main" }, { after: page.next, limit: 500 });
    }
    for (const n of acknowledged) assert.ok(present.has(n), `acknowledged commit ${n} is missing`);
    // Commits were applied in the order sent, so what survived is a prefix 0..m.
    const max = Math.max(...present);
    assert.equal(present.size, max + 1, "the surviving commits are a prefix");
    assert.ok(present.size >= acknowledged.length);
    // The reopened store takes commits again.
    store.put({ collection: "log", branch: "main" }, [{ key: "after", value: 1 }]);
  } finally {
    await store.close();
  }
});
