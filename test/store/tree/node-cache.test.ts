import assert from "node:assert/strict";
import { test } from "node:test";
import type { TreeNode } from "../../../src/store/tree/node.ts";
import { NodeCache } from "../../../src/store/tree/node-cache.ts";

const node = (hash: string, size: number): TreeNode => ({
  level: 0,
  keys: [],
  items: [],
  hash,
  size,
});

test("the cache stays within its byte capacity", () => {
  const cache = new NodeCache(1000);
  for (let i = 0; i < 100; i++) cache.set(node(`n${i}`, 90));
  assert.ok(cache.bytes <= 1000);
  assert.equal(cache.size, 11);
  assert.equal(cache.get("n99")?.hash, "n99");
  assert.equal(cache.get("n0"), undefined);
});

test("a recently used node survives eviction; an unused one goes first", () => {
  const cache = new NodeCache(300);
  cache.set(node("a", 100));
  cache.set(node("b", 100));
  cache.set(node("c", 100));
  cache.get("a");
  cache.set(node("d", 100));
  assert.ok(cache.get("a"));
  assert.equal(cache.get("b"), undefined);
});

test("a node larger than the capacity is not cached; shrinking evicts", () => {
  const cache = new NodeCache(100);
  cache.set(node("big", 101));
  assert.equal(cache.get("big"), undefined);
  cache.set(node("x", 60));
  cache.resize(50);
  assert.equal(cache.bytes, 0);
});
