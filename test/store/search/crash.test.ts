/**
 * A store killed (SIGKILL, a real process) while one of its search indexes is being
 * updated reopens with correct answers: the keyword index (one SQLite transaction per
 * update) and the HNSW index (its last checkpoint, caught up from its version) answer as
 * the exact searches do, and no file of a killed checkpoint is left behind. The store runs
 * with SKEIN_SEARCH_TRACE=1, whose synchronous trace lines say an update has started
 * while the process is still inside it: the kill is sent at a start line, and the kill is
 * known to have landed inside the update when the process wrote no end line for it.
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { StoreClient } from "../../../src/store/client/client.ts";
import { embedGroup, records, type Served, serve, settled, testModel, until } from "./fixture.ts";

const ENV = { SKEIN_SEARCH_INDEX_MIN: "50", SKEIN_SEARCH_TRACE: "1" };
const QUESTIONS = ["vector search model", "the store branch version", "people work world"];
/** Changed records per attempt: an update of this many takes long enough to be hit. */
const CHANGED = 1500;
/** Attempts per index at landing a kill inside an update (each one is checked all the same). */
const ATTEMPTS = 6;

interface TraceLine {
  readonly msg: string;
  readonly phase: "start" | "end";
  readonly id: number;
  readonly index: "vector" | "keyword";
  readonly update: string;
  readonly records?: number;
}

function traceLines(served: Served): TraceLine[] {
  return served.logs().filter((l) => l.msg === "search index update") as unknown as TraceLine[];
}

/** SIGKILLs the store as soon as it writes a start line `pick` selects; that line. */
function killAtUpdate(served: Served, pick: (line: TraceLine) => boolean): Promise<TraceLine> {
  const child = served.running.child;
  let buffered = "";
  return new Promise((resolve) => {
    const onData = (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const text of lines) {
        if (!text.startsWith('{"msg":"search index update"')) continue;
        const line = JSON.parse(text) as TraceLine;
        if (line.phase !== "start" || !pick(line)) continue;
        child.kill("SIGKILL");
        child.stderr!.off("data", onData);
        resolve(line);
        return;
      }
    };
    child.stderr!.on("data", onData);
  });
}

async function assertCorrect(client: StoreClient): Promise<void> {
  for (const question of QUESTIONS) {
    const exact = await client.search("notes", "body", question, {
      mode: "vector",
      k: 10,
      exact: true,
    });
    const indexed = await client.search("notes", "body", question, { mode: "vector", k: 10 });
    assert.deepEqual(
      indexed.rows.map((r) => Math.round(r.score * 1e4)),
      exact.rows.map((r) => Math.round(r.score * 1e4)),
      question,
    );
    const keyword = await client.search("notes", "body", question, { mode: "keyword", k: 10 });
    // exact: every record read into a throwaway index, the keyword oracle.
    const scratch = await client.search("notes", "body", question, {
      mode: "keyword",
      k: 10,
      exact: true,
    });
    assert.deepEqual(keyword.rows, scratch.rows, question);
  }
}

/** Every file under search/vectors is named by a checkpoint. */
function assertNoStrayFiles(dataDir: string): void {
  const dir = join(dataDir, "search", "vectors");
  const files = readdirSync(dir);
  const named = new Set<string>();
  for (const file of files.filter((f) => f.endsWith(".json") && !f.endsWith(".labels.json"))) {
    const checkpoint = JSON.parse(readFileSync(join(dir, file), "utf8"));
    named.add(file).add(checkpoint.index).add(checkpoint.labels);
  }
  assert.deepEqual(files.sort(), [...named].sort());
}

/** The killed store served again on its data: settled, correct, and no stray index file. */
async function restartedCorrect(group: Record<string, unknown>, killed: Served) {
  const served = await serve(group, killed.dataDir, ENV);
  const client = await served.client();
  await settled(client, "notes");
  await assertCorrect(client);
  assertNoStrayFiles(killed.dataDir);
  return { served, client };
}

/** A store serving `notes` with CHANGED records, embedded, no index yet. */
async function embedded() {
  const model = await testModel();
  // Pages of 1024 records: the walk re-embeds a big change in large companion commits, so
  // the HNSW index is caught up from large diffs.
  const group = { ...embedGroup(model), embed_page_records: 1024, embed_batch_items: 32 };
  const served = await serve(group, undefined, ENV);
  const client = await served.client();
  await client.call("collections.create", { collection: "notes" });
  await client.put("notes", records(0, CHANGED));
  await client.embedEnable("notes", "body");
  await settled(client, "notes");
  return { group, served, client };
}

test("SIGKILL inside index updates, then correct answers after restart", async (t) => {
  let { group, served, client } = await embedded();
  await client.search("notes", "body", "text", { mode: "hybrid" });
  await until(() => served.logs().some((l) => l.msg === "search index built"), "the index build");
  let shift = 0;
  for (const index of ["vector", "keyword"] as const) {
    let landed = false;
    for (let attempt = 1; attempt <= ATTEMPTS && !landed; attempt++) {
      // A large change: the background catches the keyword index up from the data's diff
      // and, as the walk re-embeds it, the HNSW index from the companion's.
      const killed = killAtUpdate(
        served,
        (l) => l.index === index && l.update === "catch_up" && (l.records ?? 0) >= 500,
      );
      shift++;
      const put = client.put("notes", records(0, CHANGED, shift)).catch(() => {});
      const event = await killed;
      await served.running.exited;
      await put;
      landed = !traceLines(served).some((l) => l.id === event.id && l.phase === "end");
      t.diagnostic(`${index} attempt ${attempt}: ${event.records} records, inside: ${landed}`);
      ({ served, client } = await restartedCorrect(group, served));
    }
    assert.ok(landed, `a SIGKILL landed inside a ${index} index update`);
  }
  await served.stop();
});

test("SIGKILL while a built index is swapped in (its first checkpoint): whole or absent", async (t) => {
  let { group, served, client } = await embedded();
  // The build runs on the index thread; its checkpoint (the swap on disk: files, then the
  // name file renamed) starts once the thread hands the index back.
  const killed = killAtUpdate(served, (l) => l.index === "vector" && l.update === "checkpoint");
  await client.search("notes", "body", "text", { mode: "vector" });
  const event = await killed;
  await served.running.exited;
  const inside = !traceLines(served).some((l) => l.id === event.id && l.phase === "end");
  t.diagnostic(`killed at the checkpoint of ${event.records} records, inside: ${inside}`);
  ({ served } = await restartedCorrect(group, served));
  await served.stop();
});
