/**
 * The MCP tools of the review loop: merge a branch (conflicts as values, a dry-run
 * preview), revert a version, and name versions with tags. Refs (a branch, BRANCH@VERSION,
 * a tag, a version number) are taken wherever a version is.
 */

import {
  author,
  branch,
  collection,
  input,
  limit,
  message,
  NAME,
  page,
  receipt,
  ref,
  sweep,
  type ToolSpec,
} from "./schemas.ts";

const strategy = {
  type: "string",
  enum: ["fail", "ours", "theirs"],
  description:
    "What a conflict becomes: fail (default: nothing is committed), ours (keep the branch's " +
    "side) or theirs (take the other side).",
};
const dryRun = {
  type: "boolean",
  description:
    "Compute the result and conflicts; commit nothing. Decided as a read of the branches " +
    "involved; the answer's allowed says whether the same call without dry_run is allowed.",
};
const mergeResult = {
  type: "object",
  properties: {
    outcome: { type: "string" },
    committed: { type: "boolean" },
    receipt: {},
    base: {},
    ours: { type: "integer" },
    theirs: { type: "integer" },
    applied: { type: "integer" },
    conflicts: { type: "array", items: { type: "object" } },
    conflict_count: { type: "integer" },
    // A dry run on a store with `idp`: whether the same call without dry_run is allowed.
    allowed: { type: "boolean" },
  },
  required: ["outcome", "committed", "conflicts", "conflict_count"],
};

export const VERSIONING_TOOLS: readonly ToolSpec[] = [
  {
    name: "branches_merge",
    verb: "branches.merge",
    title: "Merge a branch",
    description:
      "Merges the version `from` names (a branch, BRANCH@VERSION or a tag) into the branch " +
      "`into`: a fast-forward when into has not moved, otherwise a three-way merge from the " +
      "common ancestor and a merge commit. Conflicts (both sides changed a key differently) " +
      "come back as {key, base, ours, theirs}; with strategy fail (default) a conflict " +
      "refuses the merge (merge_conflict) and nothing is committed. Use dry_run to preview: " +
      "it needs only read on both branches and answers allowed, whether you may merge.",
    inputSchema: input(
      { collection, from: ref, into: branch, strategy, dry_run: dryRun, message, author },
      ["collection", "from", "into"],
    ),
    outputSchema: mergeResult,
    readOnly: false,
    destructive: false,
  },
  {
    name: "branches_revert",
    verb: "branches.revert",
    title: "Revert a version",
    description:
      "Commits the inverse of one version's changes on a branch; keys changed since are " +
      "conflicts, as in a merge (strategy, dry_run).",
    inputSchema: input(
      { collection, branch, version: ref, strategy, dry_run: dryRun, message, author },
      ["collection", "version"],
    ),
    outputSchema: mergeResult,
    readOnly: false,
    destructive: true,
  },
  {
    name: "tags_create",
    verb: "tags.create",
    title: "Tag a version",
    description:
      "Names a version (default: the branch head) with a tag, usable as a ref anywhere a " +
      "version is taken; the tag keeps the version readable until it is deleted.",
    inputSchema: input({ collection, tag: NAME, branch, version: ref, message, author }, [
      "collection",
      "tag",
    ]),
    outputSchema: { type: "object", properties: { name: { type: "string" }, version: receipt } },
    readOnly: false,
    destructive: false,
  },
  {
    name: "tags_list",
    verb: "tags.list",
    title: "List tags",
    description: "Lists a collection's tags in name order with the version each names.",
    inputSchema: input({ collection, after: NAME, limit }, ["collection"]),
    outputSchema: page({ type: "object" }),
    readOnly: true,
    destructive: false,
  },
  {
    name: "tags_delete",
    verb: "tags.delete",
    title: "Delete a tag",
    description: "Deletes a tag; retention may then release the version it kept.",
    inputSchema: input({ collection, tag: NAME }, ["collection", "tag"]),
    outputSchema: sweep,
    readOnly: false,
    destructive: true,
  },
];
