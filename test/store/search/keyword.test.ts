// The keyword index store: the match expression never passes FTS5 syntax through, edits and
// version moves are one transaction (a failure leaves the index as it was), indexes drop.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import {
  KeywordIndexes,
  matchExpression,
  QUESTION_WORDS,
} from "../../../src/store/search/keyword.ts";

const dir = mkdtempSync(join(tmpdir(), "skein-keyword-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("a question's words are quoted and ORed; no words: no expression; at most 64 words", () => {
  assert.equal(
    matchExpression('vector" OR NEAR(x*) -y'),
    '"vector" OR "OR" OR "NEAR" OR "x" OR "y"',
  );
  assert.equal(matchExpression("  ?! "), undefined);
  assert.equal(matchExpression("Café über 42"), '"Café" OR "über" OR "42"');
  const many = Array.from({ length: 100 }, (_, i) => `w${i}`).join(" ");
  assert.equal(matchExpression(many)!.split(" OR ").length, QUESTION_WORDS);
});

test("rebuild, apply and search; BM25 prefers the record with more of the words", () => {
  const indexes = new KeywordIndexes(join(dir, "a.sqlite"));
  const index = indexes.rebuild("c", "main", "body", 5, [
    { key: "a", text: "vector search" },
    { key: "b", text: "vector" },
    { key: "c", text: "the store" },
  ]);
  assert.deepEqual(
    indexes.search(index, "vector search", 10).map((h) => h.key),
    ["a", "b"],
  );
  const moved = indexes.apply(
    index,
    { puts: [{ key: "b", text: "vector search vector search" }], deletes: ["a"] },
    9,
  );
  assert.equal(moved.version, 9);
  assert.deepEqual(
    indexes.search(moved, "search", 10).map((h) => h.key),
    ["b"],
  );
  assert.deepEqual(
    indexes.search(moved, "store", 10, "c").map((h) => h.key),
    ["c"],
  );
  assert.deepEqual(indexes.search(moved, "store", 10, "b"), []);
  indexes.close();
  const reopened = new KeywordIndexes(join(dir, "a.sqlite"));
  assert.equal(reopened.find("c", "main")?.version, 9, "the version is stored with the index");
  reopened.drop("c");
  assert.equal(reopened.find("c", "main"), undefined);
  assert.deepEqual(reopened.all(), []);
  reopened.close();
});

test("an edit that fails half way leaves the index and its version as they were", () => {
  const indexes = new KeywordIndexes(":memory:");
  const index = indexes.rebuild("c", "main", "body", 1, [{ key: "a", text: "vector" }]);
  const failing = {
    *[Symbol.iterator]() {
      yield { key: "b", text: "vector" };
      throw new Error("the source failed");
    },
  };
  assert.throws(() => indexes.rebuild("c", "main", "body", 2, failing), /the source failed/);
  const kept = indexes.find("c", "main")!;
  assert.equal(kept.version, 1);
  assert.deepEqual(
    indexes.search(kept, "vector", 10).map((h) => h.key),
    ["a"],
  );
  assert.equal(index.id, kept.id);
  indexes.close();
});
