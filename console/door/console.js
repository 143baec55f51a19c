/**
 * The door's browser console: Preact + htm as plain ES modules (no build step). Every view
 * has its own path, so any view can be shared as a URL. All store calls go through
 * POST /api/call with the session's CSRF token; the door adds the user's pass. This module
 * routes and holds the browsing views; shared pieces are in kit.js, the review (compare,
 * merge, revert, tags) in compare.js, merge.js and versions.js.
 */

import { Change } from "/changes.js";
import { Compare, comparePath, compareRoute } from "/compare.js";
import {
  ApiError,
  auth,
  branchPath,
  call,
  collPath,
  ErrorBox,
  enc,
  failure,
  go,
  html,
  Loaded,
  link,
  refOf,
  SignIn,
  segment,
  short,
  storePath,
  useActs,
  useLoad,
} from "/kit.js";
import { useState } from "/vendor/hooks.mjs";
import { render } from "/vendor/preact.mjs";
import { RevertPanel, Tags } from "/versions.js";

/** @typedef {import("/kit.js").Failure} Failure */

// ---------- routing ----------

function parseRoute() {
  // Empty segments are kept: a key may hold "//" or end with "/" (see docPath).
  const raw = location.pathname.split("/").slice(1);
  const parts = raw.map(segment);
  const query = new URLSearchParams(location.search);
  const route = { query };
  if (parts[0] !== "s" || !parts[1]) return { ...route, view: "stores" };
  route.store = parts[1];
  if (parts[2] !== "c" || !parts[3]) return { ...route, view: "collections" };
  route.collection = parts[3];
  if (parts[4] === "diff") return { ...route, view: "diff" };
  if (parts[4] === "tags") return { ...route, view: "tags" };
  // The compare segment is split before decoding: its names' own dots are written %2E.
  if (parts[4] === "compare") return { ...route, view: "compare", ...compareRoute(raw[5]) };
  if (parts[4] !== "b" || !parts[5]) return { ...route, view: "branches" };
  route.branch = parts[5];
  if (parts[6] === "docs") return { ...route, view: "docs" };
  if (parts[6] === "query") return { ...route, view: "query" };
  if (parts[6] === "doc") {
    const key = parts.length > 7 ? parts.slice(7).join("/") : (query.get("key") ?? "");
    return { ...route, view: "doc", key };
  }
  return { ...route, view: "history" };
}

/**
 * A document's URL. Any key of 1 to 1024 bytes is legal, so its "/"-separated parts become
 * path segments, each percent-encoded (dots, %, spaces, unicode, ? and # included) and empty
 * ones kept. A part "." or ".." cannot be a segment: every URL parser removes dot segments,
 * even encoded as %2E. Such a key goes in the query instead: `doc?key=…`.
 */
function docPath(r, key, params = {}) {
  const query = new URLSearchParams(params);
  const parts = key.split("/");
  let path = `${branchPath(r)}/doc`;
  if (parts.some((part) => part === "." || part === "..")) query.set("key", key);
  else path += `/${parts.map(enc).join("/")}`;
  const search = query.toString();
  return search === "" ? path : `${path}?${search}`;
}

// ---------- the API ----------

// ---------- shared pieces ----------

function Crumbs({ r }) {
  const items = [link("/", "stores")];
  if (r.store) items.push(link(storePath(r), r.store));
  if (r.collection) items.push(link(collPath(r), r.collection));
  if (r.branch) items.push(link(branchPath(r), r.branch));
  return html`<nav class="crumbs">
    ${items.map((item, i) => html`${i > 0 ? html`<span class="sep">/</span>` : ""}${item}`)}
  </nav>`;
}

async function signOut() {
  await fetch("/signout", {
    method: "POST",
    headers: { "x-csrf-token": auth.session?.csrf ?? "" },
  });
  auth.session = null;
  go("/signed-out");
}

function Top({ r }) {
  return html`<header class="top">
    <span class="brand">Skein</span>
    <${Crumbs} r=${r} />
    <span class="who">${auth.session ? auth.session.subject : ""}</span>
    ${auth.session ? html`<button onClick=${signOut}>Sign out</button>` : ""}
  </header>`;
}

// ---------- views ----------

function Stores() {
  return html`<h1>Stores</h1>
    <div class="panel">
      <table>
        <tr><th>Store</th></tr>
        ${(auth.session?.stores ?? []).map((name) => html`<tr><td>${link(`/s/${enc(name)}`, name)}</td></tr>`)}
      </table>
    </div>`;
}

function Collections({ r }) {
  const state = useLoad(() => call(r.store, "collections.list", { limit: 100 }), [r.store]);
  return html`<h1>Collections of ${r.store}</h1>
    <${Loaded} state=${state}>
      ${(page) =>
        page.rows.length === 0
          ? html`<p class="empty">No collections.</p>`
          : html`<div class="panel"><table>
              <tr><th>Collection</th><th>Created</th></tr>
              ${page.rows.map(
                (c) => html`<tr>
                  <td>${link(`${storePath(r)}/c/${enc(c.name)}`, c.name)}</td>
                  <td class="muted">${short(c.created_at)}</td>
                </tr>`,
              )}
            </table></div>`}
    <//>`;
}

function Branches({ r }) {
  const { tick, error, act } = useActs(r);
  const [name, setName] = useState("");
  const [from, setFrom] = useState("main");
  const state = useLoad(
    () => call(r.store, "branches.list", { collection: r.collection, limit: 100 }),
    [r.store, r.collection, tick],
  );
  const create = (event) => {
    event.preventDefault();
    if (!confirm(`Create branch ${name} from ${from}?`)) return;
    act("branches.create", { branch: name, from_branch: from }).then((ok) => ok && setName(""));
  };
  const remove = (branch) => {
    if (confirm(`Delete branch ${branch}?`)) act("branches.delete", { branch });
  };
  return html`<h1>Branches of ${r.collection}</h1>
    <p class="row">${link(`${collPath(r)}/tags`, "Tags")}</p>
    <${ErrorBox} error=${error} />
    <${Loaded} state=${state}>
      ${(page) => html`<div class="panel"><table>
          <tr><th>Branch</th><th>Head</th><th>Last commit</th><th></th></tr>
          ${page.rows.map(
            (b) => html`<tr data-branch=${b.name}>
              <td>${link(branchPath(r, b.name), b.name)}</td>
              <td class="mono">v${b.head.version}</td>
              <td class="muted">${b.head.author} · ${short(b.head.time)}</td>
              <td class="row">
                ${link(`${branchPath(r, b.name)}/docs`, "documents")}
                ${
                  b.name === "main"
                    ? ""
                    : html`${link(comparePath(r, "main", b.name), "compare with main")}
                      ${link(`${collPath(r)}/diff?from=main&to=${enc(b.name)}`, "diff with main")}
                      <button class="danger" onClick=${() => remove(b.name)}>Delete</button>`
                }
              </td>
            </tr>`,
          )}
        </table></div>
        <form class="panel row" onSubmit=${create}>
          <strong>New branch</strong>
          <input placeholder="name" value=${name} onInput=${(e) => setName(e.target.value)} />
          <span class="muted">from</span>
          <select value=${from} onChange=${(e) => setFrom(e.target.value)}>
            ${page.rows.map((b) => html`<option>${b.name}</option>`)}
          </select>
          <button class="primary" type="submit">Create</button>
        </form>`}
    <//>`;
}

function Tabs({ r, on }) {
  const tab = (path, name, text) => link(path, text, { class: on === name ? "on" : "" });
  return html`<div class="tabs">
    ${tab(branchPath(r), "history", "History")}
    ${tab(`${branchPath(r)}/docs`, "docs", "Documents")}
    ${tab(`${branchPath(r)}/query`, "query", "Query")}
    ${tab(`${collPath(r)}/diff?from=main&to=${enc(r.branch)}`, "diff", "Diff with main")}
    ${r.branch === "main" ? "" : tab(comparePath(r, "main", r.branch), "compare", "Compare with main")}
  </div>`;
}

function History({ r }) {
  const before = r.query.get("before");
  const [tick, setTick] = useState(0);
  const [reverting, setReverting] = useState(/** @type {number | null} */ (null));
  const [notice, setNotice] = useState(/** @type {string | null} */ (null));
  const reverted = (/** @type {string | null} */ text) => {
    setReverting(null);
    setNotice(text);
    if (text !== null) setTick(tick + 1);
  };
  const state = useLoad(
    () =>
      call(r.store, "history.list", {
        collection: r.collection,
        branch: r.branch,
        limit: 50,
        ...(before ? { before: Number(before) } : {}),
      }),
    [r.store, r.collection, r.branch, before, tick],
  );
  const at = (v) => `${enc(r.branch)}@${v}`;
  return html`<h1>History of ${r.collection} / ${r.branch}</h1>
    <${Tabs} r=${r} on="history" />
    ${notice ? html`<div class="notice" role="status">${notice}</div>` : ""}
    ${reverting === null ? "" : html`<${RevertPanel} r=${r} version=${reverting} done=${reverted} key=${reverting} />`}
    <${Loaded} state=${state}>
      ${(page) => html`<div class="panel"><table class="history">
          <tr><th>Version</th><th>Time</th><th>Author</th><th>Message</th><th></th></tr>
          ${page.rows.map(
            (row, i) => html`<tr data-version=${row.version}>
              <td class="mono">v${row.version}</td>
              <td class="muted">${short(row.time)}</td>
              <td>${row.author}</td>
              <td class="muted">${row.message ?? ""}</td>
              <td class="row">
                ${
                  page.rows[i + 1]
                    ? link(
                        `${collPath(r)}/diff?from=${at(page.rows[i + 1].version)}&to=${at(row.version)}`,
                        "changes",
                      )
                    : ""
                }
                ${link(`${branchPath(r)}/docs?version=${row.version}`, "browse")}
                <button onClick=${() => setReverting(row.version)}>Revert</button>
              </td>
            </tr>`,
          )}
        </table>
        ${page.next !== null ? link(`${branchPath(r)}?before=${page.next}`, "older →") : ""}
        </div>`}
    <//>`;
}

function Docs({ r }) {
  const prefix = r.query.get("prefix") ?? "";
  const version = r.query.get("version");
  const [text, setText] = useState(prefix);
  const state = useLoad(
    () =>
      call(r.store, "document.list", {
        collection: r.collection,
        branch: r.branch,
        limit: 100,
        ...(prefix ? { prefix } : {}),
        ...(version ? { version: refOf(version) } : {}),
      }),
    [r.store, r.collection, r.branch, prefix, version],
  );
  const search = (event) => {
    event.preventDefault();
    const q = new URLSearchParams(r.query);
    if (text) q.set("prefix", text);
    else q.delete("prefix");
    go(`${branchPath(r)}/docs?${q}`);
  };
  return html`<h1>Documents of ${r.collection} / ${r.branch}${version ? ` at v${version}` : ""}</h1>
    <${Tabs} r=${r} on="docs" />
    <form class="row panel" onSubmit=${search}>
      <input name="prefix" placeholder="key prefix" value=${text} onInput=${(e) => setText(e.target.value)} />
      <button type="submit">Search</button>
      ${version ? "" : link(`${branchPath(r)}/doc/?new=1`, "New document", { class: "button" })}
    </form>
    <${Loaded} state=${state}>
      ${(page) =>
        page.rows.length === 0
          ? html`<p class="empty">No documents${prefix ? ` with prefix “${prefix}”` : ""}.</p>`
          : html`<div class="panel"><table>
              <tr><th>Key</th><th>Value</th></tr>
              ${page.rows.map(
                (d) => html`<tr>
                  <td class="mono">${link(docPath(r, d.key, version ? { version } : {}), d.key)}</td>
                  <td class="mono muted">${preview(d.value)}</td>
                </tr>`,
              )}
            </table></div>`}
    <//>`;
}

function preview(value) {
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

function Doc({ r }) {
  const creating = r.key === "";
  const version = r.query.get("version");
  const [key, setKey] = useState(r.key);
  const [text, setText] = useState(/** @type {string | null} */ (null));
  const [error, setError] = useState(/** @type {Failure | null} */ (null));
  const [saved, setSaved] = useState(
    /** @type {{ version: number, author: string } | null} */ (null),
  );
  const state = useLoad(
    () =>
      creating
        ? Promise.resolve({ found: false, value: {} })
        : call(r.store, "document.get", {
            collection: r.collection,
            branch: r.branch,
            key: r.key,
            ...(version ? { version: refOf(version) } : {}),
          }),
    [r.store, r.collection, r.branch, r.key, version],
  );
  const save = async (event) => {
    event.preventDefault();
    let value;
    try {
      value = JSON.parse(text ?? JSON.stringify(state.data.value, null, 2));
    } catch (parseError) {
      setError({
        code: "invalid_json",
        message: `the value is not JSON: ${failure(parseError).message}`,
      });
      return;
    }
    try {
      const receipt = await call(r.store, "document.put", {
        collection: r.collection,
        branch: r.branch,
        key,
        value,
      });
      setError(null);
      setSaved(receipt);
    } catch (putError) {
      setError(failure(putError));
    }
  };
  const remove = async () => {
    if (!confirm(`Delete ${r.key}?`)) return;
    try {
      const receipt = await call(r.store, "document.delete", {
        collection: r.collection,
        branch: r.branch,
        key: r.key,
      });
      setSaved(receipt);
    } catch (deleteError) {
      setError(failure(deleteError));
    }
  };
  return html`<h1>${creating ? "New document" : html`<span class="mono">${r.key}</span>`}</h1>
    <${Tabs} r=${r} on="docs" />
    <${ErrorBox} error=${error} />
    ${
      saved
        ? html`<div class="notice" role="status">
            Saved as version <strong class="mono">v${saved.version}</strong> by ${saved.author}.
            ${link(branchPath(r), "See it in the history")}
          </div>`
        : ""
    }
    <${Loaded} state=${state}>
      ${(doc) =>
        !doc.found && !creating
          ? html`<p class="empty">No document ${r.key} at this version.</p>`
          : html`<form class="panel" onSubmit=${save}>
              ${creating ? html`<p><input placeholder="key" value=${key} onInput=${(e) => setKey(e.target.value)} /></p>` : ""}
              <textarea name="value" readonly=${version !== null}
                value=${text ?? JSON.stringify(doc.value, null, 2)}
                onInput=${(e) => setText(e.target.value)} />
              ${
                version
                  ? html`<p class="muted">Version v${version} is read-only.</p>`
                  : html`<p class="row">
                      <button class="primary" type="submit">Save</button>
                      ${creating ? "" : html`<button class="danger" type="button" onClick=${remove}>Delete</button>`}
                      <span class="muted">version v${doc.version}</span>
                    </p>`
              }
            </form>`}
    <//>`;
}

// ---------- query ----------

const SAMPLE_QUERY = "(r, a) => r.value.status === a.status ? r.value : undefined";

/** query.run on the branch; the code, args and prefix live in the URL so a query is shareable. */
function Query({ r }) {
  const code = r.query.get("code");
  const argsText = r.query.get("args") ?? "";
  const prefix = r.query.get("prefix") ?? "";
  const [form, setForm] = useState({ code: code ?? SAMPLE_QUERY, args: argsText, prefix });
  const state = useLoad(() => {
    if (code === null) return Promise.resolve(null);
    let args;
    try {
      args = argsText === "" ? undefined : JSON.parse(argsText);
    } catch (error) {
      return Promise.reject(
        new ApiError(400, "invalid_json", `args are not JSON: ${failure(error).message}`),
      );
    }
    return call(r.store, "query.run", {
      collection: r.collection,
      branch: r.branch,
      code,
      limit: 100,
      ...(args === undefined ? {} : { args }),
      ...(prefix ? { prefix } : {}),
    });
  }, [r.store, r.collection, r.branch, code, argsText, prefix]);
  const run = (event) => {
    event.preventDefault();
    const q = new URLSearchParams({ code: form.code });
    if (form.args) q.set("args", form.args);
    if (form.prefix) q.set("prefix", form.prefix);
    go(`${branchPath(r)}/query?${q}`);
  };
  const set = (field) => (e) => setForm({ ...form, [field]: e.target.value });
  return html`<h1>Query ${r.collection} / ${r.branch}</h1>
    <${Tabs} r=${r} on="query" />
    <form class="panel" onSubmit=${run}>
      <p class="muted">A JavaScript function <span class="mono">(record, args) => output | undefined</span>, run in the store's sandbox.</p>
      <textarea name="code" class="short" value=${form.code} onInput=${set("code")} />
      <p class="row">
        <input name="args" placeholder='args (JSON), e.g. {"status":"ready"}' value=${form.args} onInput=${set("args")} />
        <input name="prefix" placeholder="key prefix" value=${form.prefix} onInput=${set("prefix")} />
        <button class="primary" type="submit">Run</button>
      </p>
    </form>
    <${Loaded} state=${state}>
      ${(page) =>
        page === null
          ? ""
          : html`<p class="muted">${page.rows.length} rows from ${page.scanned} records at v${page.version}</p>
            <div class="panel"><table class="query">
              <tr><th>Key</th><th>Output</th></tr>
              ${page.rows.map(
                (row) => html`<tr><td class="mono">${link(docPath(r, row.key), row.key)}</td>
                  <td><pre>${JSON.stringify(row.output, null, 2)}</pre></td></tr>`,
              )}
            </table></div>`}
    <//>`;
}

// ---------- diff ----------

/** "branch" or "branch@version" → {branch, version?}. */
function side(text) {
  const at = text.lastIndexOf("@");
  if (at < 0) return { branch: text };
  return { branch: text.slice(0, at), version: Number(text.slice(at + 1)) };
}

async function headOf(r, branch) {
  const page = await call(r.store, "history.list", { collection: r.collection, branch, limit: 1 });
  if (page.rows.length === 0)
    throw new ApiError(404, "version_not_found", `${branch} has no version`);
  return page.rows[0].version;
}

async function loadDiff(r, from, to) {
  const fromVersion = from.version ?? (await headOf(r, from.branch));
  const rows = [];
  let cursor;
  // Pages of changes until the end or a screenful; the console shows at most 500.
  do {
    const page = await call(r.store, "changes.list", {
      collection: r.collection,
      branch: to.branch,
      from_branch: from.branch,
      from: fromVersion,
      ...(to.version !== undefined ? { to: to.version } : {}),
      limit: 100,
      ...(cursor ? { cursor } : {}),
    });
    rows.push(...page.changes);
    cursor = page.cursor;
    if (rows.length >= 500) break;
  } while (cursor);
  return { rows, from: fromVersion, more: cursor !== null && cursor !== undefined };
}

function Diff({ r }) {
  const fromText = r.query.get("from") ?? "main";
  const toText = r.query.get("to") ?? "main";
  const [form, setForm] = useState({ from: fromText, to: toText });
  const state = useLoad(
    () => loadDiff(r, side(fromText), side(toText)),
    [r.store, r.collection, fromText, toText],
  );
  const compare = (event) => {
    event.preventDefault();
    go(`${collPath(r)}/diff?from=${enc(form.from)}&to=${enc(form.to)}`);
  };
  return html`<h1>Diff of ${r.collection}</h1>
    <form class="panel row" onSubmit=${compare}>
      <span class="muted">from</span>
      <input name="from" value=${form.from} onInput=${(e) => setForm({ ...form, from: e.target.value })} />
      <span class="muted">to</span>
      <input name="to" value=${form.to} onInput=${(e) => setForm({ ...form, to: e.target.value })} />
      <button type="submit">Compare</button>
      <span class="muted">branch or branch@version</span>
    </form>
    <${Loaded} state=${state}>
      ${(diff) => {
        const count = (t) => diff.rows.filter((c) => c.type === t).length;
        return html`<div class="summary">
            <span class="badge added">${count("added")} added</span>
            <span class="badge removed">${count("removed")} removed</span>
            <span class="badge modified">${count("modified")} modified</span>
            <span class="muted">${side(fromText).branch}@v${diff.from} → ${toText}</span>
          </div>
          ${diff.rows.length === 0 ? html`<p class="empty">No differences.</p>` : ""}
          ${diff.rows.map((change) => html`<${Change} change=${change} />`)}
          ${diff.more ? html`<p class="muted">Only the first 500 changes are shown.</p>` : ""}`;
      }}
    <//>`;
}

// ---------- the app ----------

const VIEWS = {
  stores: Stores,
  collections: Collections,
  branches: Branches,
  history: History,
  docs: Docs,
  doc: Doc,
  query: Query,
  diff: Diff,
  compare: Compare,
  tags: Tags,
};

function App() {
  const r = parseRoute();
  if (location.pathname === "/signed-out") {
    return html`<${Top} r=${{}} /><main><div class="panel"><h1>Signed out</h1>
      <a class="button primary" href="/signin">Sign in</a></div></main>`;
  }
  if (auth.session === null) return html`<${Top} r=${{}} /><main><${SignIn} /></main>`;
  const View = VIEWS[r.view];
  return html`<${Top} r=${r} /><main><${View} r=${r} key=${location.href} /></main>`;
}

function refresh() {
  const app = document.getElementById("app");
  if (app === null) return;
  // The static "Loading…" placeholder is not Preact's: it goes before the first render.
  if (app.dataset.rendered === undefined) {
    app.textContent = "";
    app.dataset.rendered = "1";
  }
  render(html`<${App} />`, app);
}

async function start() {
  const response = await fetch("/api/session");
  auth.session = response.ok ? await response.json() : null;
  refresh();
}

addEventListener("popstate", refresh);
start();
