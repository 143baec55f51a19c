/**
 * Shared pieces of the run console: Preact + htm (served from this package, no build step),
 * path routing under /ui (every view has a shareable URL), loading and error boxes, the
 * confirmation dialog, and time and JSON formatting.
 */

import { useEffect, useRef, useState } from "/ui/vendor/hooks.mjs";
import htm from "/ui/vendor/htm.mjs";
import { h, render } from "/ui/vendor/preact.mjs";

export const html = htm.bind(h);
export { render, useEffect, useRef, useState };

export const enc = encodeURIComponent;

/**
 * @typedef {{ code: string, message: string }} Failure  What an error box shows.
 */
/**
 * @template T
 * @typedef {{ loading?: boolean, data?: T, error?: Failure }} Load  A value being loaded.
 */

/** A thrown value as an error box shows it (a server refusal keeps its code). */
export function failure(/** @type {unknown} */ error) {
  if (typeof error === "object" && error !== null && "code" in error && "message" in error) {
    return { code: String(error.code), message: String(error.message) };
  }
  return { code: "console_error", message: error instanceof Error ? error.message : String(error) };
}

let refresh = () => {};
export function onNavigate(callback) {
  refresh = callback;
}

export function go(path) {
  history.pushState(null, "", path);
  refresh();
}

export function link(path, text, attrs = {}) {
  const click = (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    go(path);
  };
  return html`<a href=${path} onClick=${click} ...${attrs}>${text}</a>`;
}

export const nsPath = (ns) => `/ui/n/${enc(ns)}`;
export const runPath = (ns, workflowId) => `${nsPath(ns)}/runs/${enc(workflowId)}`;
export const attemptPath = (ns, workflowId, a) =>
  `${runPath(ns, workflowId)}/attempt/${enc(a.run_id)}/${a.activity_id}/${a.attempt}`;

/**
 * Runs `load` when `deps` change; `{loading}`, `{data}` or `{error}`, plus `reload()`.
 * @template T
 * @param {() => Promise<T>} load
 * @param {unknown[]} deps
 * @returns {Load<T> & { reload: () => void }}
 */
export function useLoad(load, deps) {
  const [state, setState] = useState(/** @type {Load<T>} */ ({ loading: true }));
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ data }),
      (error) => live && setState({ error: failure(error) }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/** `value`, changing at most once per `ms` (the latest value wins): bursts make one reload. */
export function useThrottled(value, ms) {
  const [shown, setShown] = useState(value);
  const last = useRef(0);
  useEffect(() => {
    const timer = setTimeout(
      () => {
        last.current = Date.now();
        setShown(value);
      },
      Math.max(0, last.current + ms - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [value]);
  return shown;
}

export function ErrorBox({ error }) {
  if (!error) return null;
  const denied = error.code === "forbidden" || error.code === "deployments_disabled";
  return html`<div class=${denied ? "error denied" : "error"} role="alert" data-code=${error.code}>
    <strong>${denied ? "Denied" : "Error"}</strong>${error.message}
    <span class="muted mono"> (${error.code ?? "error"})</span>
  </div>`;
}

export function Loaded({ state, children }) {
  if (state.error) return html`<${ErrorBox} error=${state.error} />`;
  if (state.loading && state.data === undefined) return html`<p class="loading">Loading…</p>`;
  return children(state.data);
}

/**
 * A modal confirmation: the title, what will happen (`children`), Confirm and Cancel. It
 * uses the browser's <dialog> so focus and Escape behave as users expect.
 */
export function Confirm({ title, children, confirm = "Confirm", danger, onConfirm, onClose }) {
  const ref = useRef(/** @type {HTMLDialogElement | null} */ (null));
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const submit = (event) => {
    event.preventDefault();
    onConfirm();
  };
  return html`<dialog ref=${ref} class="confirm" onClose=${onClose} aria-label=${title}>
    <form onSubmit=${submit}>
      <h2>${title}</h2>
      ${children}
      <div class="row end">
        <button type="button" onClick=${() => ref.current?.close()}>Back</button>
        <button type="submit" class=${danger ? "danger" : "primary"}>${confirm}</button>
      </div>
    </form>
  </dialog>`;
}

/** A definition version (`sha256:…`) as its first 12 hex digits. */
export const digest = (version) =>
  String(version)
    .replace(/^sha256:/, "")
    .slice(0, 12);

/** A UUID shortened for a table: v7 ids share their leading (time) digits, so both ends. */
export const short = (id) =>
  typeof id === "string" && id.length > 16 ? `${id.slice(0, 8)}…${id.slice(-4)}` : String(id);

export function time(value) {
  if (value === null || value === undefined) return "—";
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : d.toISOString().replace("T", " ").slice(0, 23);
}

export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return m < 60 ? `${m} m ${Math.round((ms % 60_000) / 1000)} s` : `${(m / 60).toFixed(1)} h`;
}

export const json = (value) => JSON.stringify(value, null, 2);

export function Status({ status }) {
  return html`<span class=${`badge status ${String(status).toLowerCase()}`}>${status}</span>`;
}
