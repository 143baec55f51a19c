import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { nodeCodec } from "../../../src/store/codec/node-codec.ts";
import { StoreDatabase } from "../../../src/store/lmdb/database.ts";
import { type Edit, TreeEditor } from "../../../src/store/tree/chunker.ts";
import { NodeCache } from "../../../src/store/tree/node-cache.ts";
import { NodeReader } from "../../../src/store/tree/node-store.ts";

/** A real LMDB node table in a temp dir, removed after the test file. */
export function treeFixture() {
  const dir = mkdtempSync(join(tmpdir(), "skein-tree-"));
  const db = new StoreDatabase(dir);
  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const reader = new NodeReader(db, nodeCodec, new NodeCache(64 << 20));
  /** Applies edits and persists the new nodes, like a commit does. */
  function apply(root: string | null, edits: Edit[]): string | null {
    const editor = new TreeEditor(reader);
    const sorted = [...edits].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const next = editor.apply(root, sorted);
    db.commit(() => {
      for (const [hash, bytes] of editor.encodedNodes()) db.putNode(hash, bytes);
    });
    return next;
  }
  return { db, reader, apply };
}

export const key = (i: number) => `doc-${String(i).padStart(6, "0")}`;
export const value = (i: number, tag = "v") => JSON.stringify({ n: i, tag, pad: "x".repeat(40) });
