/**
 * What every view of the door's console shares: the signed-in session, the routing helpers
 * (paths of stores, collections and branches, `go` and `link`), the one way to the door's API
 * (`call`, whose refusals keep the store's code), loading state, and the boxes that show a
 * failure or ask to sign in. The views live in their own modules (console.js, compare.js,
 * merge.js, versions.js) and import from here only, so none reaches into another.
 */

import { useEffect, useState } from "/vendor/hooks.mjs";
import htm from "/vendor/htm.mjs";
import { h } from "/vendor/preact.mjs";

export const html = htm.bind(h);

/**
 * @typedef {{ subject: string, csrf: string, stores: string[] }} Session
 * @typedef {{ code: string, message: string }} Failure  What an error box shows.
 */
/**
 * @template T
 * @typedef {{ loading?: boolean, data?: T, error?: Failure }} Load  A value being loaded.
 */

/** The signed-in session (null when signed out); console.js sets it at start and sign-out. */
export const auth = { session: /** @type {Session | null} */ (null) };

// ---------- routing ----------

export const enc = encodeURIComponent;

/** A path segment as text; one that is not valid percent-encoding is taken as written. */
export function segment(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Moves to a view: the app re-renders on popstate, the one event both ways of moving raise. */
export function go(path) {
  history.pushState(null, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

export function link(path, text, attrs = {}) {
  const click = (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey) return;
    event.preventDefault();
    go(path);
  };
  return html`<a href=${path} onClick=${click} ...${attrs}>${text}</a>`;
}

export const storePath = (r) => `/s/${enc(r.store)}`;
export const collPath = (r) => `${storePath(r)}/c/${enc(r.collection)}`;
export const branchPath = (r, branch = r.branch) => `${collPath(r)}/b/${enc(branch)}`;

// ---------- the API ----------

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function call(store, verb, args = {}) {
  const response = await fetch("/api/call", {
    method: "POST",
    headers: { "content-type": "application/json", "x-csrf-token": auth.session?.csrf ?? "" },
    body: JSON.stringify({ store, verb, args }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = body.error ?? { code: `http_${response.status}`, message: response.statusText };
    if (error.code === "signed_out") auth.session = null;
    throw new ApiError(response.status, error.code, error.message);
  }
  return body.result;
}

/** A thrown value as an error box shows it (a store refusal keeps its code). */
export function failure(/** @type {unknown} */ error) {
  if (error instanceof ApiError) return error;
  return { code: "console_error", message: error instanceof Error ? error.message : String(error) };
}

/**
 * @template T
 * @param {() => Promise<T>} load
 * @param {unknown[]} deps
 * @returns {Load<T>}
 */
export function useLoad(load, deps) {
  const [state, setState] = useState(/** @type {Load<T>} */ ({ loading: true }));
  useEffect(() => {
    let live = true;
    setState({ loading: true });
    load().then(
      (data) => live && setState({ data }),
      (error) => live && setState({ error: failure(error) }),
    );
    return () => {
      live = false;
    };
  }, deps);
  return state;
}

/**
 * A view's acts on its collection: `act` calls a verb with the collection added, then bumps
 * `tick` (a view's loads depend on it, so they reload) or keeps the failure for its error box.
 */
export function useActs(r) {
  const [tick, setTick] = useState(0);
  const [error, setError] = useState(/** @type {Failure | null} */ (null));
  const act = (verb, args) =>
    call(r.store, verb, { collection: r.collection, ...args }).then(
      () => {
        setError(null);
        setTick((t) => t + 1);
        return true;
      },
      (e) => {
        setError(failure(e));
        return false;
      },
    );
  return { tick, error, act };
}

// ---------- shared pieces ----------

export function ErrorBox({ error }) {
  if (!error) return null;
  if (error.code === "signed_out") return html`<${SignIn} expired=${true} />`;
  if (error.code === "query_disabled") {
    return html`<div class="notice" data-code="query_disabled">This store runs no query worker.</div>`;
  }
  const denied = error.code === "permission_denied";
  const title = denied ? "Denied" : "Error";
  return html`<div class=${denied ? "error denied" : "error"} role="alert" data-code=${error.code}>
    <strong>${title}</strong>${error.message}
    <span class="muted mono"> (${error.code})</span>
  </div>`;
}

export function Loaded({ state, children }) {
  if (state.loading) return html`<p class="loading">Loading…</p>`;
  if (state.error) return html`<${ErrorBox} error=${state.error} />`;
  return children(state.data);
}

export function SignIn({ expired }) {
  const back = location.pathname + location.search;
  return html`<div class="panel">
    <h1>${expired ? "Your session has ended" : "Skein console"}</h1>
    <p>${expired ? "Sign in again to go on." : "Sign in to review the stores."}</p>
    <a class="button primary" href=${`/signin?return=${enc(back)}`}>Sign in</a>
  </div>`;
}

export const short = (time) => time.replace("T", " ").replace(/\.\d+Z$/, "Z");

/** A ref typed in a URL or a form: digits are a version number, anything else a name. */
export const refOf = (text) => (/^\d+$/.test(text) ? Number(text) : text);
