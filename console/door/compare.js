/**
 * The review's compare view, `/s/STORE/c/COLL/compare/BASE...HEAD`: what the branch HEAD
 * changed since it parted from BASE. It shows how far each side moved since their common
 * ancestor (ahead/behind), HEAD's commits since then with their messages, and the changed
 * records as a structural diff from the ancestor, a page at a time (a cursor per page, so
 * thousands of changes never load at once). The merge panel (merge.js) sits under it.
 *
 * The ancestor comes from a dry-run merge, which the identity provider decides as the merge
 * itself (write on BASE). A reader without write gets it from the two histories instead: the
 * newest version of HEAD's heads that BASE reached (as a head, or as a merge's parent).
 */

import { Change } from "/changes.js";
import { call, collPath, enc, failure, html, Loaded, link, segment, useLoad } from "/kit.js";
import { MergePanel } from "/merge.js";
import { useState } from "/vendor/hooks.mjs";

/**
 * @typedef {{ version: number, time: string, author: string, message?: string, parents?: number[] }} Receipt
 * @typedef {{ key: string, base?: unknown, ours?: unknown, theirs?: unknown }} Conflict
 * @typedef {{ outcome: string, base: number | null, ours: number, theirs: number, applied: number,
 *   conflicts: Conflict[], conflict_count: number, receipt: Receipt | null,
 *   allowed?: boolean }} MergeResult
 * @typedef {{ key: string, type: string, from?: unknown, to?: unknown }} ChangeRow
 * @typedef {{ preview: MergeResult | null, denied: import("/kit.js").Failure | null,
 *   ancestor: number | null, from: { branch: string, version: number | string },
 *   ahead: Receipt[], behind: number, more: boolean, moreBehind: boolean }} Comparison
 */

/** Changes per page of the compare view: one changes.list call each. */
const PAGE = 100;
/** Heads read from each branch's history for ahead/behind and HEAD's commit messages. */
const HISTORY = 100;

/**
 * The compare URL. Branch names may hold dots (`v1.2`, `a..b`, even `...`), so every dot of a
 * name is written %2E and the one literal `...` is the separator; a hand-typed URL with plain
 * dots splits at its first `...` (`main...v1.2`, `a..b...main`).
 */
export function comparePath(r, base, head) {
  const name = (branch) => enc(branch).replaceAll(".", "%2E");
  return `${collPath(r)}/compare/${name(base)}...${name(head)}`;
}

/** BASE and HEAD of a compare path's last segment, as written (still percent-encoded). */
export function compareRoute(raw = "") {
  const at = raw.indexOf("...");
  if (at < 0) return { base: "main", head: segment(raw) };
  return { base: segment(raw.slice(0, at)), head: segment(raw.slice(at + 3)) };
}

const heads = (r, branch) =>
  call(r.store, "history.list", { collection: r.collection, branch, limit: HISTORY });

/** The newest of HEAD's heads that BASE reached, from the two histories (readers' ancestor). */
function ancestorOf(headRows, baseRows) {
  const reached = new Set();
  for (const row of baseRows) {
    reached.add(row.version);
    for (const parent of row.parents ?? []) reached.add(parent);
  }
  return headRows.find((row) => reached.has(row.version))?.version ?? null;
}

/** The ref changes.list diffs from: the ancestor, read where it is retained. */
async function diffStart(r, base, head, ancestor) {
  if (ancestor === null) return { branch: base, version: base };
  for (const branch of [head, base]) {
    try {
      await call(r.store, "document.list", {
        collection: r.collection,
        branch,
        version: ancestor,
        limit: 1,
      });
      return { branch, version: ancestor };
    } catch (error) {
      if (failure(error).code !== "version_not_found") throw error;
    }
  }
  return { branch: base, version: ancestor };
}

/** @returns {Promise<Comparison>} */
async function compare(r, base, head) {
  /** @type {MergeResult | null} */
  let preview = null;
  /** @type {import("/kit.js").Failure | null} */
  let denied = null;
  try {
    preview = await call(r.store, "branches.merge", {
      collection: r.collection,
      from: head,
      into: base,
      dry_run: true,
    });
  } catch (error) {
    denied = failure(error);
    if (denied.code !== "permission_denied") throw error;
  }
  const [headPage, basePage] = await Promise.all([heads(r, head), heads(r, base)]);
  const ancestor = preview ? preview.base : ancestorOf(headPage.rows, basePage.rows);
  const newer = (rows) => (ancestor === null ? rows : rows.filter((row) => row.version > ancestor));
  const ahead = newer(headPage.rows);
  const behind = newer(basePage.rows).length;
  return {
    preview,
    denied,
    ancestor,
    from: await diffStart(r, base, head, ancestor),
    ahead,
    behind,
    // Only the newest HISTORY heads are read: a count that fills them all is a lower bound.
    more: headPage.next !== null && ahead.length === headPage.rows.length,
    moreBehind: basePage.next !== null && behind === basePage.rows.length,
  };
}

/** One page of the changes HEAD made since the ancestor. */
function ChangesPage({ r, head, from }) {
  /** @type {(string | undefined)[]} */
  const initial = [undefined];
  const [cursors, setCursors] = useState(initial);
  const cursor = cursors[cursors.length - 1];
  const state = useLoad(
    () =>
      call(r.store, "changes.list", {
        collection: r.collection,
        branch: head,
        from_branch: from.branch,
        from: from.version,
        limit: PAGE,
        ...(cursor ? { cursor } : {}),
      }),
    [r.store, r.collection, head, from.branch, from.version, cursor],
  );
  const first = (cursors.length - 1) * PAGE;
  return html`<${Loaded} state=${state}>
    ${(page) => {
      const count = (type) => page.changes.filter((c) => c.type === type).length;
      const pager = html`<p class="row pager">
        <button disabled=${cursors.length === 1} onClick=${() => setCursors(cursors.slice(0, -1))}>← Previous</button>
        <span class="muted">changes ${page.changes.length === 0 ? 0 : first + 1}–${first + page.changes.length}</span>
        <button disabled=${!page.cursor} onClick=${() => setCursors([...cursors, page.cursor])}>Next →</button>
      </p>`;
      return html`<div class="summary">
          <span class="badge added">${count("added")} added</span>
          <span class="badge removed">${count("removed")} removed</span>
          <span class="badge modified">${count("modified")} modified</span>
          <span class="muted">on this page</span>
        </div>
        ${page.changes.length === 0 ? html`<p class="empty">No changes.</p>` : ""}
        ${page.changes.map((change) => html`<${Change} change=${change} />`)}
        ${cursors.length > 1 || page.cursor ? pager : ""}`;
    }}
  <//>`;
}

export function Compare({ r }) {
  const { base, head } = r;
  const [tick, setTick] = useState(0);
  const [notice, setNotice] = useState(/** @type {string | null} */ (null));
  /** After an act: say what happened, and load the comparison again. */
  const refresh = (/** @type {string | null} */ text) => {
    setNotice(text);
    setTick(tick + 1);
  };
  const state = useLoad(() => compare(r, base, head), [r.store, r.collection, base, head, tick]);
  return html`<h1>Compare <span class="mono">${base}</span> … <span class="mono">${head}</span></h1>
    <p class="row">
      ${link(comparePath(r, head, base), "swap")}
      ${link(`${collPath(r)}/b/${enc(head)}`, `history of ${head}`)}
      ${link(`${collPath(r)}/tags`, "tags")}
    </p>
    ${notice ? html`<div class="notice" role="status">${notice}</div>` : ""}
    <${Loaded} state=${state}>
      ${(/** @type {Comparison} */ c) => html`
        <div class="panel counts" data-ahead=${c.ahead.length} data-behind=${c.behind}>
          <strong>${head}</strong>${" is "}<strong class="ahead">${c.ahead.length}${c.more ? "+" : ""}</strong>
          ${" version(s) ahead of and "}<strong class="behind">${c.behind}${c.moreBehind ? "+" : ""}</strong>${" behind "}
          <strong>${base}</strong>
          <span class="muted">${c.ancestor === null ? " (no common ancestor found)" : ` since their common ancestor v${c.ancestor}`}</span>
        </div>
        <div class="panel"><h2>Commits on ${head}</h2><table class="commits">
          ${c.ahead.map(
            (row) => html`<tr data-version=${row.version}>
              <td class="mono">v${row.version}</td>
              <td>${row.message ?? html`<span class="muted">(no message)</span>`}</td>
              <td class="muted">${row.author}</td>
            </tr>`,
          )}
        </table></div>
        <${MergePanel} r=${r} base=${base} head=${head} comparison=${c} refresh=${refresh} />
        <h2>Changes</h2>
        <${ChangesPage} r=${r} head=${head} from=${c.from} key=${`${c.from.branch}@${c.from.version}/${tick}`} />`}
    <//>`;
}
