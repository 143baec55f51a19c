/**
 * The console's plain views: the namespaces the bearer may see, a namespace's definitions
 * with their versions (each version's stored document), and the worker deployments with the
 * managed workers of this node, their state and their recent log lines.
 */

import { get, qs } from "/ui/api.js";
import {
  digest,
  ErrorBox,
  enc,
  html,
  json,
  Loaded,
  link,
  nsPath,
  time,
  useLoad,
  useState,
} from "/ui/lib.js";

export function Namespaces() {
  const state = useLoad(() => get("/namespaces"), []);
  return html`<h1>Namespaces</h1>
    <${Loaded} state=${state}>
      ${(data) =>
        data.namespaces.length === 0
          ? html`<p class="empty">This bearer sees no namespace.</p>`
          : html`<div class="panel"><table class="namespaces">
              <tr><th>Namespace</th><th></th></tr>
              ${data.namespaces.map(
                (n) => html`<tr data-namespace=${n.name}>
                  <td>${link(`${nsPath(n.name)}/runs`, n.name)}</td>
                  <td>${link(`${nsPath(n.name)}/definitions`, "definitions")}</td>
                </tr>`,
              )}
            </table></div>`}
    <//>`;
}

function Versions({ ns, name }) {
  const state = useLoad(
    () => get(`/workflows/definitions/versions?${qs({ namespace: ns, name })}`),
    [ns, name],
  );
  return html`<${Loaded} state=${state}>
    ${(data) =>
      html`<ul class="versions">
        ${data.versions.map(
          (v) => html`<li data-version=${v.version}>
            <details>
              <summary>
                <span class="mono">${digest(v.version)}</span>
                ${v.latest ? html` <span class="badge added">latest</span>` : null}
                <span class="muted"> ${time(v.registered_at)} by ${v.registered_by}</span>
              </summary>
              <pre>${json(v.document)}</pre>
            </details>
          </li>`,
        )}
      </ul>`}
  <//>`;
}

export function Definitions({ route }) {
  const ns = route.ns;
  const state = useLoad(() => get(`/workflows/definitions?${qs({ namespace: ns })}`), [ns]);
  const [open, setOpen] = useState(null);
  return html`<h1>Definitions in ${ns}</h1>
    <${Loaded} state=${state}>
      ${(data) =>
        html`<div class="panel"><table class="definitions">
          <tr><th>Name</th><th>Latest version</th><th>Versions</th><th>Registered</th><th></th></tr>
          ${data.definitions.map(
            (d) => html`<tr data-definition=${d.name}>
                <td>${link(`${nsPath(ns)}/runs?${qs({ definition: d.name })}`, d.name)}</td>
                <td class="mono">${digest(d.version)}</td>
                <td>${d.versions}</td>
                <td>${time(d.registered_at)} <span class="muted">by ${d.registered_by}</span></td>
                <td><button type="button" onClick=${() => setOpen(open === d.name ? null : d.name)}>
                  ${open === d.name ? "Hide versions" : "Versions"}
                </button></td>
              </tr>
              ${open === d.name ? html`<tr><td colspan="5"><${Versions} ns=${ns} name=${d.name} /></td></tr>` : null}`,
          )}
        </table></div>`}
    <//>`;
}

function Logs({ name }) {
  const state = useLoad(() => get(`/worker-deployments/${enc(name)}/logs?lines=100`), [name]);
  return html`<div class="logs">
    <div class="row"><strong>Recent log lines</strong>
      <button type="button" onClick=${state.reload}>Refresh</button></div>
    <${Loaded} state=${state}>
      ${(data) =>
        data.lines.length === 0
          ? html`<p class="empty">No log lines yet.</p>`
          : html`<pre class="log">${data.lines.join("\n")}</pre>`}
    <//>
  </div>`;
}

function Process({ p }) {
  if (!p) return html`<span class="muted">—</span>`;
  const exit = p.last_exit
    ? ` · last exit ${p.last_exit.code ?? p.last_exit.signal} at ${time(p.last_exit.at)}`
    : "";
  return html`<span class=${`badge state ${p.state}`}>${p.state}</span>
    <span class="muted">${p.pid ? ` pid ${p.pid}` : ""} · restarts ${p.restarts}${exit}</span>`;
}

export function Deployments() {
  const deployments = useLoad(() => get("/worker-deployments"), []);
  const managed = useLoad(() => get("/workers/managed"), []);
  const [open, setOpen] = useState(null);
  const rows = new Map((managed.data?.managed ?? []).map((m) => [m.name, m]));
  return html`<h1>Deployments</h1>
    ${managed.error ? html`<${ErrorBox} error=${managed.error} />` : null}
    <${Loaded} state=${deployments}>
      ${(data) =>
        html`<div class="panel"><table class="deployments">
          <tr><th>Name</th><th>Queue</th><th>Namespaces</th><th>Desired</th><th>Process (node ${managed.data?.node_id ?? "?"})</th><th></th></tr>
          ${data.deployments.map(
            (d) => html`<tr data-deployment=${d.name}>
                <td class="mono">${d.name}</td>
                <td>${d.task_queue}</td>
                <td>${d.namespaces.join(", ")}</td>
                <td>${d.desired} <span class="muted">rev ${d.revision}</span></td>
                <td><${Process} p=${rows.get(d.name)} /></td>
                <td><button type="button" onClick=${() => setOpen(open === d.name ? null : d.name)}>
                  ${open === d.name ? "Hide log" : "Log"}
                </button></td>
              </tr>
              ${open === d.name ? html`<tr><td colspan="6"><${Logs} name=${d.name} /></td></tr>` : null}`,
          )}
          ${data.undecodable.map(
            (u) =>
              html`<tr><td class="mono">${u.name}</td><td colspan="5" class="error">${u.reason}</td></tr>`,
          )}
        </table>
        ${data.deployments.length === 0 ? html`<p class="empty">No deployments.</p>` : null}
        </div>`}
    <//>`;
}
