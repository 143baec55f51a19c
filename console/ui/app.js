/**
 * The run console's entry: the sign-in (a bearer pasted in, or handed over in the URL
 * fragment by `skein ui`, kept in this tab's sessionStorage only), the top bar and the
 * router. Paths: /ui/ namespaces, /ui/n/NS/runs, /ui/n/NS/runs/WF, /ui/n/NS/runs/WF/attempt/
 * RUN/ACTIVITY/ATTEMPT, /ui/n/NS/definitions, /ui/deployments.
 */

import { claims, get, token, whenSignedOut } from "/ui/api.js";
import { AttemptView } from "/ui/attempt.js";
import { failure, html, link, nsPath, onNavigate, render, useState } from "/ui/lib.js";
import { Definitions, Deployments, Namespaces } from "/ui/ops.js";
import { RunView } from "/ui/run.js";
import { Runs } from "/ui/runs.js";

// The fragment never reaches a server or a log; move the token out of the address bar.
function takeFragmentToken() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match === null) return;
  token.set(decodeURIComponent(match[1]));
  history.replaceState(null, "", location.pathname + location.search);
}

function parseRoute() {
  const parts = location.pathname.split("/").filter(Boolean).slice(1).map(decodeURIComponent);
  const query = new URLSearchParams(location.search);
  if (parts[0] === "deployments") return { view: "deployments", query };
  if (parts[0] !== "n" || parts[1] === undefined) return { view: "namespaces", query };
  const route = { ns: parts[1], query };
  if (parts[2] === "definitions") return { ...route, view: "definitions" };
  if (parts[2] !== "runs" || parts[3] === undefined) return { ...route, view: "runs" };
  route.workflowId = parts[3];
  if (parts[4] === "attempt" && parts[7] !== undefined) {
    const ref = { run_id: parts[5], activity_id: Number(parts[6]), attempt: Number(parts[7]) };
    return { ...route, view: "attempt", ref };
  }
  return { ...route, view: "run" };
}

function SignIn({ message }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState(message);
  const submit = async (event) => {
    event.preventDefault();
    token.set(value.trim());
    try {
      await get("/namespaces");
      draw();
    } catch (e) {
      token.clear();
      const { code, message } = failure(e);
      setError(`${code}: ${message}`);
    }
  };
  return html`<main class="signin">
    <h1>Skein runs</h1>
    <p class="muted">
      Paste a bearer token of this server (<code>skein token issue</code>), or open the link
      <code>skein ui</code> prints. It is kept in this tab only.
    </p>
    ${error ? html`<div class="error" role="alert">${error}</div>` : null}
    <form onSubmit=${submit} class="row">
      <input type="password" name="token" aria-label="Bearer token" autocomplete="off"
        placeholder="bearer token" value=${value} onInput=${(e) => setValue(e.target.value)} />
      <button type="submit" class="primary">Sign in</button>
    </form>
  </main>`;
}

function Header({ route }) {
  const who = claims();
  const signOut = () => {
    token.clear();
    draw();
  };
  const crumbs = [link("/ui/", "namespaces")];
  if (route.ns !== undefined) {
    crumbs.push(link(`${nsPath(route.ns)}/runs`, route.ns, { "data-crumb": "ns" }));
    crumbs.push(link(`${nsPath(route.ns)}/definitions`, "definitions"));
  }
  crumbs.push(link("/ui/deployments", "deployments"));
  return html`<header class="top">
    <span class="brand">Skein runs</span>
    <nav class="crumbs">
      ${crumbs.map((c, i) => html`${i > 0 ? html`<span class="sep">·</span>` : null}${c}`)}
    </nav>
    <span class="who">${who.sub ?? ""}</span>
    <button type="button" onClick=${signOut}>Sign out</button>
  </header>`;
}

function View({ route }) {
  switch (route.view) {
    case "runs":
      return html`<${Runs} key=${route.ns} route=${route} />`;
    case "run":
      return html`<${RunView} key=${route.workflowId} route=${route} />`;
    case "attempt":
      return html`<${AttemptView} route=${route} />`;
    case "definitions":
      return html`<${Definitions} route=${route} />`;
    case "deployments":
      return html`<${Deployments} />`;
    default:
      return html`<${Namespaces} />`;
  }
}

let expired;
// index.html holds the element; without it there is nothing to draw into.
const root = /** @type {HTMLElement} */ (document.getElementById("app"));
// The page's static "Loading…" is not Preact's to diff: cleared once, before the first draw.
root.replaceChildren();
// Every navigation (a link, even to the view shown; back and forward) mounts the view anew,
// so it reads fresh data and closes the streams of the view it replaces.
let visit = 0;
function draw() {
  visit++;
  if (!token.get()) {
    render(html`<${SignIn} message=${expired} />`, root);
    return;
  }
  const route = parseRoute();
  render(
    html`<${Header} route=${route} /><main><${View} key=${visit} route=${route} /></main>`,
    root,
  );
}

whenSignedOut((error) => {
  expired = `Signed out: ${error.message}`;
  token.clear();
  draw();
});
onNavigate(draw);
addEventListener("popstate", draw);
takeFragmentToken();
draw();
