/**
 * The store's verbs as AuthZEN action names, each with the level a grant must reach:
 * read < write < admin (a grant of write implies read, admin implies both). A verb missing
 * here is denied: a new store verb is closed until it gets its row (docs/identity.md lists
 * the same table).
 */

import { LEVELS, type Level } from "../names.ts";

export const ACTION_LEVELS: ReadonlyMap<string, Level> = new Map<string, Level>([
  ["collections.list", LEVELS.read],
  ["branches.list", LEVELS.read],
  ["document.get", LEVELS.read],
  ["document.list", LEVELS.read],
  ["history.list", LEVELS.read],
  ["changes.list", LEVELS.read],
  ["query.run", LEVELS.read],
  ["search.text", LEVELS.read],
  ["store.stats", LEVELS.read],
  ["tags.list", LEVELS.read],
  // Embedding: texts given in the request and a field's progress and vectors are reads;
  // binding a field changes the collection (docs/embeddings.md).
  ["embed.texts", LEVELS.read],
  ["embed.status", LEVELS.read],
  ["embed.vectors", LEVELS.read],
  ["embed.enable", LEVELS.admin],
  ["document.put", LEVELS.write],
  ["document.delete", LEVELS.write],
  ["document.append_prune", LEVELS.write],
  ["branches.merge", LEVELS.write],
  ["branches.revert", LEVELS.write],
  ["tags.create", LEVELS.write],
  ["collections.create", LEVELS.admin],
  ["collections.delete", LEVELS.admin],
  ["branches.create", LEVELS.admin],
  ["branches.delete", LEVELS.admin],
  ["history.release", LEVELS.admin],
  ["tags.delete", LEVELS.admin],
  ["store.backup", LEVELS.admin],
]);
