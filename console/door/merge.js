/**
 * The review's merge panel, under the compare view: the dry-run preview (fast-forward,
 * three-way or up to date; the conflicts with their base, ours and theirs values side by
 * side), a strategy, a commit message, and a resolution per conflict: take ours (BASE's
 * value), take theirs (HEAD's) or edit the value as JSON.
 *
 * Resolutions are commits on HEAD before the merge, so the result is reproducible from
 * history: a value taken from BASE or edited is written to HEAD (one commit for the puts,
 * one for the deletions), after which every remaining conflict holds the chosen value on
 * HEAD's side and the merge takes theirs. Each step names the head it expects (the preview's
 * versions, then each receipt's): if either branch moved, the store refuses `head_moved`,
 * nothing of that step is written, and the preview is loaded again.
 */

import { call, ErrorBox, failure, html } from "/kit.js";
import { useState } from "/vendor/hooks.mjs";

/**
 * @typedef {import("/compare.js").Conflict} Conflict
 * @typedef {import("/compare.js").Comparison} Comparison
 * @typedef {{ take: "ours" | "theirs" | "edit", text: string }} Choice
 */

const show = (value) => (value === undefined ? "(absent)" : JSON.stringify(value, null, 2));

/** The three sides of a conflict, side by side. */
export function ConflictSides({ conflict, ours = "ours", theirs = "theirs" }) {
  const side = (
    name,
    label,
    value,
  ) => html`<div class=${`side-${name}`}><div class="head">${label}</div>
    <pre>${show(value)}</pre></div>`;
  return html`<div class="side three">
    ${side("base", "base", conflict.base)}${side("ours", ours, conflict.ours)}${side("theirs", theirs, conflict.theirs)}
  </div>`;
}

/**
 * What the reviewer's choices write to HEAD: puts and deletions for the conflicts whose
 * chosen value is not HEAD's already. A conflict without a choice follows the strategy
 * (`ours` writes BASE's value; `theirs` keeps HEAD's); under `fail` it stays unresolved.
 * @param {Conflict[]} conflicts
 * @param {Map<string, Choice>} choices
 * @param {string} strategy
 */
export function resolutionPlan(conflicts, choices, strategy) {
  /** @type {{ key: string, value: unknown }[]} */
  const puts = [];
  /** @type {string[]} */
  const deletes = [];
  /** @type {string[]} */
  const unresolved = [];
  /** @type {string[]} */
  const invalid = [];
  for (const conflict of conflicts) {
    const choice = choices.get(conflict.key);
    const take = choice?.take ?? (strategy === "fail" ? null : strategy);
    if (take === null) unresolved.push(conflict.key);
    else if (take === "edit") {
      try {
        puts.push({ key: conflict.key, value: JSON.parse(choice?.text ?? "") });
      } catch {
        invalid.push(conflict.key);
      }
    } else if (take === "ours") {
      if ("ours" in conflict) puts.push({ key: conflict.key, value: conflict.ours });
      else deletes.push(conflict.key);
    }
  }
  return { puts, deletes, unresolved, invalid };
}

function ConflictRow({ conflict, choice, choose, base, head }) {
  const take = choice?.take ?? "";
  const start = conflict.theirs ?? conflict.ours ?? null;
  const text = choice?.text ?? JSON.stringify(start, null, 2);
  let invalid = false;
  if (take === "edit") {
    try {
      JSON.parse(text);
    } catch {
      invalid = true;
    }
  }
  const pick = (value) => choose({ take: value, text });
  return html`<div class="conflict panel" data-key=${conflict.key}>
    <h3><span class="badge conflicting">conflict</span><span class="mono">${conflict.key}</span></h3>
    <${ConflictSides} conflict=${conflict} ours=${`ours (${base})`} theirs=${`theirs (${head})`} />
    <p class="row">
      <label><input type="radio" value="ours" checked=${take === "ours"} onChange=${() => pick("ours")} /> take ours</label>
      <label><input type="radio" value="theirs" checked=${take === "theirs"} onChange=${() => pick("theirs")} /> take theirs</label>
      <label><input type="radio" value="edit" checked=${take === "edit"} onChange=${() => pick("edit")} /> edit</label>
    </p>
    ${
      take === "edit"
        ? html`<textarea class="short" name="resolution" value=${text}
            onInput=${(e) => choose({ take: "edit", text: e.target.value })} />
          ${invalid ? html`<p class="error" data-code="invalid_json">This value is not JSON.</p>` : ""}`
        : ""
    }
  </div>`;
}

/** Why the merge cannot be made as it stands, or null. */
function blocked(c, plan, strategy, explicit, base) {
  const preview = c.preview;
  if (c.denied) return `You may not merge into ${base}: ${c.denied.message} (${c.denied.code})`;
  if (preview === null) return "There is no preview.";
  // `allowed` comes with a preview when the store decides acts with an identity provider.
  if (preview.allowed === false) {
    return `You may not merge into ${base}: branches.merge is not allowed (permission_denied)`;
  }
  if (preview.outcome === "up_to_date")
    return `${base} already holds every change: nothing to merge.`;
  if (plan.invalid.length > 0) return `The edited value of ${plan.invalid[0]} is not JSON.`;
  if (plan.unresolved.length > 0) {
    return `${plan.unresolved.length} conflict(s) unresolved: resolve each, or choose the strategy ours or theirs.`;
  }
  if (explicit && preview.conflict_count > preview.conflicts.length && strategy !== "theirs") {
    return "More conflicts than shown: resolve the rest with the strategy theirs, or merge in steps.";
  }
  return null;
}

function outcomeText(c, base, head) {
  const p = c.preview;
  if (p === null) return "The preview needs read on both branches: only the changes are shown.";
  if (p.outcome === "fast_forward")
    return `Fast-forward: ${base} moves to ${head}'s version v${p.theirs}.`;
  if (p.outcome === "up_to_date") return `Up to date: ${base} already holds ${head}.`;
  return `Three-way merge from v${p.base}: ${p.applied} key(s) from ${head}, ${p.conflict_count} conflict(s).`;
}

export function MergePanel({ r, base, head, comparison, refresh }) {
  /** @type {Comparison} */
  const c = comparison;
  const [strategy, setStrategy] = useState("fail");
  const [message, setMessage] = useState("");
  const [choices, setChoices] = useState(/** @type {Map<string, Choice>} */ (new Map()));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {import("/kit.js").Failure | null} */ (null));
  const conflicts = c.preview?.conflicts ?? [];
  const explicit = choices.size > 0;
  const plan = resolutionPlan(conflicts, choices, strategy);
  const reason = blocked(c, plan, strategy, explicit, base);
  // A fast-forward moves BASE to HEAD's version and writes no commit to carry a message.
  const fastForward = c.preview?.outcome === "fast_forward";
  const choose = (key) => (/** @type {Choice} */ choice) =>
    setChoices(new Map(choices).set(key, choice));
  const merge = async () => {
    const preview = c.preview;
    if (preview === null || !confirm(`Merge ${head} into ${base}?`)) return;
    setBusy(true);
    setError(null);
    try {
      let expectFrom = preview.theirs;
      const resolve = {
        collection: r.collection,
        branch: head,
        message: `resolve ${conflicts.length} conflict(s) of merging ${head} into ${base}`,
      };
      if (explicit && plan.puts.length > 0) {
        const args = { ...resolve, records: plan.puts, expect_head: expectFrom };
        expectFrom = (await call(r.store, "document.put", args)).version;
      }
      if (explicit && plan.deletes.length > 0) {
        const args = { ...resolve, keys: plan.deletes, expect_head: expectFrom };
        expectFrom = (await call(r.store, "document.delete", args)).version;
      }
      const result = await call(r.store, "branches.merge", {
        collection: r.collection,
        from: head,
        into: base,
        strategy: explicit ? "theirs" : strategy,
        expect_head: preview.ours,
        expect_from: expectFrom,
        ...(message ? { message } : {}),
      });
      refresh(
        result.outcome === "fast_forward"
          ? `Fast-forwarded ${base} to version v${result.receipt.version}.`
          : `Merged ${head} into ${base} as version v${result.receipt.version}.`,
      );
    } catch (caught) {
      const f = failure(caught);
      if (f.code === "head_moved") {
        refresh(
          `The preview was stale (${f.message}): it has been refreshed. Review it and merge again.`,
        );
      } else setError(f);
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="panel merge">
    <h2>Merge ${head} into ${base}</h2>
    <p class="outcome" data-outcome=${c.preview?.outcome ?? "denied"}>${outcomeText(c, base, head)}</p>
    ${conflicts.map(
      (conflict) => html`<${ConflictRow} key=${conflict.key} conflict=${conflict}
        choice=${choices.get(conflict.key)} choose=${choose(conflict.key)} base=${base} head=${head} />`,
    )}
    <p class="row">
      <span class="muted">unresolved conflicts:</span>
      <select name="strategy" value=${strategy} onChange=${(e) => setStrategy(e.target.value)}>
        <option value="fail">fail</option><option value="ours">ours</option><option value="theirs">theirs</option>
      </select>
      <input name="message" value=${message} onInput=${(e) => setMessage(e.target.value)}
        disabled=${fastForward}
        placeholder=${fastForward ? "a fast-forward makes no version: no message" : `merge ${head} into ${base}`} />
      <button class="primary" disabled=${reason !== null || busy} onClick=${merge}>Merge</button>
    </p>
    ${reason ? html`<p class="muted reason">${reason}</p>` : ""}
    <${ErrorBox} error=${error} />
  </div>`;
}
