/**
 * One changed record as the door shows it, in the diff view and the review's compare view:
 * its key and change type, the values before and after side by side, and for a modified
 * value the JSON paths that were added, removed or changed. Keys and values are rendered as
 * text nodes (htm escapes them), so a key or value holding markup stays text.
 */

import { html } from "/kit.js";

/** The leaf paths where two JSON values differ: added, removed and modified. */
export function valueDiff(a, b, path = "", out = []) {
  const isObj = (v) => v !== null && typeof v === "object";
  if (isObj(a) && isObj(b) && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const p = Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`;
      if (!(k in a)) out.push({ type: "added", path: p, to: b[k] });
      else if (!(k in b)) out.push({ type: "removed", path: p, from: a[k] });
      else valueDiff(a[k], b[k], p, out);
    }
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push({ type: "modified", path: path || "(value)", from: a, to: b });
  }
  return out;
}

const show = (v) => JSON.stringify(v);

export function Change({ change }) {
  const paths = change.type === "modified" ? valueDiff(change.from, change.to) : [];
  return html`<div class="change panel" data-key=${change.key} data-type=${change.type}>
    <h3><span class=${`badge ${change.type}`}>${change.type}</span><span class="mono">${change.key}</span></h3>
    <div class="side">
      <div class="left"><div class="head">before</div>
        <pre>${change.type === "added" ? "—" : JSON.stringify(change.from, null, 2)}</pre></div>
      <div><div class="head">after</div>
        <pre>${change.type === "removed" ? "—" : JSON.stringify(change.to, null, 2)}</pre></div>
    </div>
    ${
      paths.length > 0
        ? html`<ul class="paths mono">
            ${paths.map(
              (p) => html`<li class=${p.type}>
                ${p.type === "added" ? "+" : p.type === "removed" ? "−" : "~"} ${p.path}:
                ${p.type === "added" ? show(p.to) : p.type === "removed" ? show(p.from) : `${show(p.from)} → ${show(p.to)}`}
              </li>`,
            )}
          </ul>`
        : ""
    }
  </div>`;
}
