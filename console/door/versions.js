/**
 * Acts on versions in the door's review: reverting one version of a branch (from the history
 * view; a dry run first, showing its conflicts, then the revert, which names the head it
 * previewed so a branch that moved meanwhile is refused `head_moved` and previewed again),
 * and the collection's tags (`/s/STORE/c/COLL/tags`: list, create, delete, and open the
 * documents as they were at a tag).
 */

import {
  branchPath,
  call,
  ErrorBox,
  enc,
  failure,
  html,
  Loaded,
  link,
  refOf,
  short,
  useActs,
  useLoad,
} from "/kit.js";
import { ConflictSides } from "/merge.js";
import { useState } from "/vendor/hooks.mjs";

/** The revert of `version` on the route's branch: its dry run, then the act. */
export function RevertPanel({ r, version, done }) {
  const [tick, setTick] = useState(0);
  const [strategy, setStrategy] = useState("fail");
  const [message, setMessage] = useState("");
  const [error, setError] = useState(/** @type {import("/kit.js").Failure | null} */ (null));
  const [stale, setStale] = useState(/** @type {string | null} */ (null));
  const where = { collection: r.collection, branch: r.branch, version };
  const state = useLoad(
    () => call(r.store, "branches.revert", { ...where, dry_run: true }),
    [r.store, r.collection, r.branch, version, tick],
  );
  const revert = async (preview) => {
    if (!confirm(`Revert version v${version} on ${r.branch}?`)) return;
    try {
      const result = await call(r.store, "branches.revert", {
        ...where,
        strategy,
        expect_head: preview.ours,
        ...(message ? { message } : {}),
      });
      done(`Reverted v${version} as version v${result.receipt.version}.`);
    } catch (caught) {
      const f = failure(caught);
      if (f.code !== "head_moved") return setError(f);
      setStale(`The preview was stale (${f.message}): it has been refreshed.`);
      setTick(tick + 1);
    }
  };
  return html`<div class="panel revert" data-version=${version}>
    <h2>Revert v${version} on ${r.branch}</h2>
    ${stale ? html`<div class="notice" role="status">${stale}</div>` : ""}
    <${Loaded} state=${state}>
      ${(p) => {
        const nothing = p.outcome === "up_to_date";
        const unresolved = p.conflict_count > 0 && strategy === "fail";
        // Present when the store decides acts with an identity provider: a reader previews.
        const denied = p.allowed === false;
        return html`<p class="outcome" data-outcome=${p.outcome}>
            ${nothing ? "Nothing to revert: the branch no longer holds these changes." : `${p.applied} key(s) restored, ${p.conflict_count} conflict(s).`}
          </p>
          ${p.conflicts.map(
            (c) => html`<div class="conflict panel" data-key=${c.key}>
              <h3><span class="badge conflicting">conflict</span><span class="mono">${c.key}</span></h3>
              <${ConflictSides} conflict=${c} />
            </div>`,
          )}
          <p class="row">
            <span class="muted">conflicts:</span>
            <select name="strategy" value=${strategy} onChange=${(e) => setStrategy(e.target.value)}>
              <option value="fail">fail</option><option value="ours">ours</option><option value="theirs">theirs</option>
            </select>
            <input name="message" placeholder=${`revert version ${version}`} value=${message}
              onInput=${(e) => setMessage(e.target.value)} />
            <button class="primary" disabled=${nothing || unresolved || denied} onClick=${() => revert(p)}>Revert</button>
            <button onClick=${() => done(null)}>Cancel</button>
          </p>
          ${
            denied
              ? html`<p class="muted reason">You may not revert on ${r.branch}: branches.revert is not allowed (permission_denied)</p>`
              : unresolved
                ? html`<p class="muted reason">Choose ours or theirs for the conflicts.</p>`
                : ""
          }`;
      }}
    <//>
    <${ErrorBox} error=${error} />
  </div>`;
}

export function Tags({ r }) {
  const { tick, error, act } = useActs(r);
  const [form, setForm] = useState({ tag: "", branch: "main", version: "", message: "" });
  const state = useLoad(
    () => call(r.store, "tags.list", { collection: r.collection, limit: 100 }),
    [r.store, r.collection, tick],
  );
  const create = async (event) => {
    event.preventDefault();
    const args = {
      tag: form.tag,
      branch: form.branch,
      ...(form.version ? { version: refOf(form.version) } : {}),
      ...(form.message ? { message: form.message } : {}),
    };
    if (!confirm(`Tag ${form.branch}${form.version ? `@${form.version}` : ""} as ${form.tag}?`))
      return;
    if (await act("tags.create", args)) setForm({ ...form, tag: "", version: "", message: "" });
  };
  const remove = (tag) => {
    if (confirm(`Delete tag ${tag}?`)) act("tags.delete", { tag });
  };
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  return html`<h1>Tags of ${r.collection}</h1>
    <${ErrorBox} error=${error} />
    <${Loaded} state=${state}>
      ${(page) => html`<div class="panel"><table class="tags">
          <tr><th>Tag</th><th>Version</th><th>Branch</th><th>Message</th><th></th></tr>
          ${page.rows.map(
            (t) => html`<tr data-tag=${t.name}>
              <td class="mono">${t.name}</td>
              <td class="mono">v${t.version.version}</td>
              <td>${t.branch}</td>
              <td class="muted">${t.message ?? ""} · ${t.author} · ${short(t.created_at)}</td>
              <td class="row">
                ${link(`${branchPath(r, t.branch)}/docs?version=${enc(t.name)}`, "open")}
                <button class="danger" onClick=${() => remove(t.name)}>Delete</button>
              </td>
            </tr>`,
          )}
        </table>
        ${page.rows.length === 0 ? html`<p class="empty">No tags.</p>` : ""}</div>`}
    <//>
    <form class="panel row" onSubmit=${create}>
      <strong>New tag</strong>
      <input name="tag" placeholder="name" value=${form.tag} onInput=${set("tag")} />
      <span class="muted">at</span>
      <input name="branch" placeholder="branch" value=${form.branch} onInput=${set("branch")} />
      <input name="version" placeholder="version (head)" value=${form.version} onInput=${set("version")} />
      <input name="message" placeholder="message" value=${form.message} onInput=${set("message")} />
      <button class="primary" type="submit">Create</button>
    </form>`;
}
