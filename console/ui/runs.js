/**
 * A namespace's runs: filters (status, definition name, started after / before) and the
 * order (newest first unless `order=oldest`) kept in the URL, pages of 200 fetched with the
 * server's cursor as the list scrolls, and a virtualised list that renders only the rows in
 * view (plus a margin), so thousands of runs cost the page no more than a screenful.
 */

import { get, post, qs } from "/ui/api.js";
import {
  digest,
  duration,
  ErrorBox,
  failure,
  go,
  html,
  link,
  nsPath,
  runPath,
  Status,
  short,
  time,
  useEffect,
  useLoad,
  useRef,
  useState,
} from "/ui/lib.js";

/** @typedef {import("/ui/lib.js").Failure} Failure */

const PAGE = 200;
export const ROW_HEIGHT = 32;
const MARGIN_ROWS = 12;
const STATUSES = ["Running", "Paused", "Completed", "Failed", "Cancelled"];

/** datetime-local text (the user's zone) to RFC 3339, and back. */
const toRfc3339 = (local) => (local ? new Date(local).toISOString() : undefined);
const toLocal = (iso) => {
  if (!iso) return "";
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

function filtersOf(query) {
  return {
    status: query.get("status") ?? "",
    definition: query.get("definition") ?? "",
    started_after: query.get("after") ?? "",
    started_before: query.get("before") ?? "",
    // Newest first: the run someone is looking for is usually the one that just started.
    order: query.get("order") === "oldest" ? "oldest" : "newest",
  };
}

/** The runs view's URL for filters `f` (the default order is left out). */
function runsUrl(ns, f) {
  const query = qs({
    status: f.status,
    definition: f.definition,
    after: f.started_after,
    before: f.started_before,
    order: f.order === "oldest" ? "oldest" : undefined,
  });
  return `${nsPath(ns)}/runs${query ? `?${query}` : ""}`;
}

function listBody(ns, f, cursor) {
  const body = { namespace: ns, limit: PAGE, order: f.order };
  if (f.status) body.status = f.status;
  if (f.definition) body.definition = f.definition;
  if (f.started_after) body.started_after = f.started_after;
  if (f.started_before) body.started_before = f.started_before;
  if (cursor) body.cursor = cursor;
  return body;
}

function Filters({ ns, f }) {
  const defs = useLoad(() => get(`/workflows/definitions?${qs({ namespace: ns })}`), [ns]);
  const apply = (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    go(
      runsUrl(ns, {
        status: form.get("status"),
        definition: form.get("definition"),
        started_after: toRfc3339(form.get("after")),
        started_before: toRfc3339(form.get("before")),
        order: f.order,
      }),
    );
  };
  return html`<form class="row filters" onSubmit=${apply}>
    <label>Status <select name="status" value=${f.status}>
      <option value="">any</option>
      ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
    </select></label>
    <label>Definition <select name="definition" value=${f.definition}>
      <option value="">any</option>
      ${(defs.data?.definitions ?? []).map((d) => html`<option value=${d.name}>${d.name}</option>`)}
    </select></label>
    <label>Started after <input type="datetime-local" name="after" value=${toLocal(f.started_after)} /></label>
    <label>before <input type="datetime-local" name="before" value=${toLocal(f.started_before)} /></label>
    <button type="submit" class="primary">Filter</button>
  </form>`;
}

function Row({ ns, run, top }) {
  const ended = run.ended_at ? Date.parse(run.ended_at) : Date.now();
  return html`<div class="vrow" role="row" style=${{ transform: `translateY(${top}px)` }}
      data-workflow-id=${run.workflow_id} data-status=${run.status}>
    <span class="mono">${link(runPath(ns, run.workflow_id), short(run.workflow_id), { title: run.workflow_id })}</span>
    <span>${run.definition_name ?? digest(run.definition_version)}</span>
    <span><${Status} status=${run.status} /></span>
    <span class="mono">${time(run.started_at)}</span>
    <span>${duration(ended - Date.parse(run.started_at))}</span>
  </div>`;
}

/**
 * The loaded pages and the cursor of the next one. A reset (new filters or order, Refresh)
 * starts a new generation: a page still in flight for the previous one is dropped when it
 * lands, so a list never mixes two orders or two sets of filters.
 */
function usePages(ns, f) {
  const [state, setState] = useState(
    /** @type {{ runs: { run_id: string, [field: string]: any }[], cursor: string | undefined, done: boolean, error: Failure | null }} */ ({
      runs: [],
      cursor: undefined,
      done: false,
      error: null,
    }),
  );
  const busy = useRef(false);
  const generation = useRef(0);
  const key = JSON.stringify([ns, f]);
  const more = async (reset) => {
    if (busy.current && !reset) return;
    const mine = reset ? ++generation.current : generation.current;
    busy.current = true;
    const from = reset ? { runs: [], cursor: undefined, done: false } : state;
    const current = () => mine === generation.current;
    try {
      const page = await post("/workflows/list", listBody(ns, f, from.cursor));
      if (!current()) return;
      setState({
        runs: [...from.runs, ...page.runs],
        cursor: page.next_cursor ?? undefined,
        done: page.next_cursor === null,
        error: null,
      });
    } catch (error) {
      if (current()) setState({ ...from, done: true, error: failure(error) });
    } finally {
      if (current()) busy.current = false;
    }
  };
  useEffect(() => {
    more(true);
  }, [key]);
  return { ...state, more: () => !state.done && more(false), reload: () => more(true) };
}

/** The Started column's header: the order of the list, a click turns it around. */
function OrderToggle({ ns, f }) {
  const newest = f.order === "newest";
  const other = newest ? "oldest" : "newest";
  return html`<span>
    <button type="button" class="sort" data-order=${f.order}
        title=${`${newest ? "Newest" : "Oldest"} first; click for ${other} first`}
        onClick=${() => go(runsUrl(ns, { ...f, order: other }))}>
      Started ${newest ? "↓" : "↑"}
    </button>
  </span>`;
}

export function Runs({ route }) {
  const ns = route.ns;
  const f = filtersOf(route.query);
  const pages = usePages(ns, f);
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [view, setView] = useState({ top: 0, height: 600 });
  const onScroll = () => {
    const el = box.current;
    if (el) setView({ top: el.scrollTop, height: el.clientHeight });
  };
  // Other filters or the other order are another list: it starts at its top.
  useEffect(() => {
    if (box.current) box.current.scrollTop = 0;
    onScroll();
  }, [JSON.stringify([ns, f])]);
  const first = Math.max(0, Math.floor(view.top / ROW_HEIGHT) - MARGIN_ROWS);
  const last = Math.min(
    pages.runs.length,
    Math.ceil((view.top + view.height) / ROW_HEIGHT) + MARGIN_ROWS,
  );
  useEffect(() => {
    if (last >= pages.runs.length - MARGIN_ROWS) pages.more();
  }, [last, pages.runs.length, pages.done]);
  const rows = [];
  for (let i = first; i < last; i++) {
    const run = pages.runs[i];
    rows.push(html`<${Row} key=${run.run_id} ns=${ns} run=${run} top=${i * ROW_HEIGHT} />`);
  }
  return html`<h1>Runs in ${ns}</h1>
    <${Filters} ns=${ns} f=${f} />
    <${ErrorBox} error=${pages.error} />
    <div class="row muted">
      <span data-loaded=${pages.runs.length}>${pages.runs.length} runs loaded${pages.done ? "" : ", more on scroll"}</span>
      <button type="button" onClick=${pages.reload}>Refresh</button>
    </div>
    <div class="vhead"><span>Workflow</span><span>Definition</span><span>Status</span>
      <${OrderToggle} ns=${ns} f=${f} /><span>Duration</span></div>
    <div class="vlist" ref=${box} onScroll=${onScroll} role="table" aria-label="runs">
      <div class="vspace" style=${{ height: `${pages.runs.length * ROW_HEIGHT}px` }}>${rows}</div>
    </div>
    ${pages.runs.length === 0 && pages.done && !pages.error ? html`<p class="empty">No runs.</p>` : null}`;
}
