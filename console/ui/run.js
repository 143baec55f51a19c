/**
 * One run: its status, input and output, its history as a timeline (live: the history
 * stream, or the describe long poll where the server has no stream), what it waits on (its
 * pending activities and the workers serving their queues), its live attempts (each opens
 * the attempt view) and the controls (signal, pause, resume, cancel), each confirmed first;
 * a cancel's confirmation names the descendants the cascade will reach.
 */

import { follow, post, readHistory, sleep } from "/ui/api.js";
import {
  attemptPath,
  Confirm,
  digest,
  duration,
  ErrorBox,
  failure,
  html,
  json,
  Loaded,
  link,
  runPath,
  Status,
  short,
  time,
  useEffect,
  useLoad,
  useRef,
  useState,
  useThrottled,
} from "/ui/lib.js";

/** @typedef {import("/ui/lib.js").Failure} Failure */
/** @typedef {import("/ui/api.js").HistoryEvent} HistoryEvent */
import { liveDescendants, Timeline } from "/ui/timeline.js";

const ENDS = ["RunCompleted", "RunFailed", "RunCancelled"];

/**
 * The run's events, appended as they commit; `live` says how they arrive. What is stored is
 * read first in pages (a long history is never one answer), then the stream goes on from
 * there.
 */
function useHistory(ns, workflowId) {
  const [state, setState] = useState(
    /** @type {{ events: HistoryEvent[], ended: boolean, live: string, error: Failure | null }} */ ({
      events: [],
      ended: false,
      live: "connecting",
      error: null,
    }),
  );
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    let stop = () => {};
    const buffer = [];
    let frame = 0;
    const append = (batch) => {
      if (batch.length > 0) setState((s) => ({ ...s, events: [...s.events, ...batch] }));
    };
    const flush = () => {
      frame = 0;
      append(buffer.splice(0));
    };
    const end = () => setState((s) => ({ ...s, ended: true, live: "ended" }));
    const body = { namespace: ns, workflow_id: workflowId };
    // Without a stream route: one paged read of the new events per describe long poll.
    const fallback = async (seen, signal) => {
      setState((s) => ({ ...s, live: "long poll" }));
      while (!signal.aborted) {
        try {
          const fresh = await readHistory(body, { after: seen.count, signal });
          seen.count += fresh.length;
          append(fresh);
          if (fresh.some((e) => ENDS.includes(e.type))) return end();
          await post("/workflows/describe", { ...body, wait_ms: 5000 }, signal);
        } catch (error) {
          if (signal.aborted) return;
          setState((s) => ({ ...s, error: failure(error) }));
          await sleep(2000, signal);
        }
      }
    };
    (async () => {
      setState((s) => ({ ...s, live: "loading" }));
      // Counted page by page: after a failed read the stream goes on from what was shown.
      let read = 0;
      let ended = false;
      const onPage = (events) => {
        read += events.length;
        ended ||= events.some((e) => ENDS.includes(e.type));
        append(events);
      };
      try {
        await readHistory(body, { signal, onPage });
      } catch (error) {
        if (signal.aborted) return;
        setState((s) => ({ ...s, error: failure(error) }));
      }
      if (signal.aborted) return;
      if (ended) return end();
      setState((s) => ({ ...s, live: "stream" }));
      stop = follow("/workflows/history/stream", body, {
        from: read,
        onItem: (data) => {
          buffer.push(data.event);
          if (frame === 0) frame = requestAnimationFrame(flush);
        },
        onEnd: () => {
          flush();
          end();
        },
        onError: (error) => setState((s) => ({ ...s, error })),
        fallback,
      });
    })();
    return () => {
      controller.abort();
      stop();
      cancelAnimationFrame(frame);
    };
  }, [ns, workflowId]);
  return state;
}

/**
 * Where the run's agents work in a store (describe's `workspaces`): each branch, its base,
 * and a link to the door's compare view of the two, where a person reviews (and merges) the work.
 * @param {{ workspaces: { activity_id: number, attempt: number, server: string, collection: string, branch: string, base: string, review_url: string | null }[] }} props
 */
function Workspaces({ workspaces }) {
  if (workspaces.length === 0) return null;
  return html`<h2>Store branches (${workspaces.length})</h2>
    <div class="panel"><table class="workspaces">
      <tr><th>Activity</th><th>Attempt</th><th>Server</th><th>Collection</th><th>Branch</th><th>Base</th><th>Review</th></tr>
      ${workspaces.map(
        (w) => html`<tr data-workspace=${w.branch}>
          <td>${w.activity_id}</td><td>${w.attempt}</td><td>${w.server}</td><td class="mono">${w.collection}</td>
          <td class="mono">${w.branch}</td><td class="mono">${w.base}</td>
          <td>${w.review_url ? html`<a href=${w.review_url} target="_blank" rel="noopener noreferrer" data-review>Review in the door</a>` : "—"}</td>
        </tr>`,
      )}
    </table></div>`;
}

function Pending({ ns, pending, total }) {
  const queues = [...new Set(pending.map((p) => p.task_queue))];
  const workers = useLoad(
    () =>
      Promise.all(
        queues.map((q) => post("/task-queues/describe", { namespace: ns, task_queue: q })),
      ),
    [ns, queues.join("\n")],
  );
  if (pending.length === 0) return null;
  return html`<h2>Pending activities (${total})</h2>
    <div class="panel"><table class="pending">
      <tr><th>ID</th><th>Step</th><th>Action</th><th>Queue</th><th>Attempt</th><th>State</th><th>Next retry</th><th>Workers</th><th>Last failure</th></tr>
      ${pending.map(
        (p) => html`<tr data-activity=${p.activity_id} data-state=${p.state}>
          <td>${p.activity_id}</td><td>${p.step_id}</td><td class="mono">${p.action}</td><td>${p.task_queue}</td>
          <td>${p.attempt}</td><td><span class=${`badge state ${p.state}`}>${p.state}</span></td>
          <td>${time(p.next_retry_at)}</td>
          <td class=${p.workers_serving === 0 ? "warn" : ""}>${p.workers_serving}</td>
          <td>${p.last_failure ? `#${p.last_failure.attempt} ${p.last_failure.code}: ${p.last_failure.message}` : "—"}</td>
        </tr>`,
      )}
    </table></div>
    <h2>Workers serving these queues</h2>
    <${Loaded} state=${workers}>
      ${(list) => html`<div class="panel"><table class="workers">
        <tr><th>Queue</th><th>Worker</th><th>Kind</th><th>Busy / concurrency</th><th>Actions</th><th>Deployment</th></tr>
        ${list.flatMap((q) =>
          q.workers.length === 0
            ? [
                html`<tr><td>${q.task_queue}</td><td colspan="5" class="warn">no worker connected (backlog ${q.backlog})</td></tr>`,
              ]
            : q.workers.map(
                (
                  w,
                ) => html`<tr data-worker=${w.name}><td>${q.task_queue}</td><td>${w.name}</td><td>${w.kind}</td>
                  <td>${w.busy} / ${w.concurrency}</td><td class="mono">${w.actions.join(", ")}</td><td>${w.deployment ?? "—"}</td></tr>`,
              ),
        )}
      </table></div>`}
    <//>`;
}

/**
 * The run's live attempts. An attempt goes live (and ends) with no history event of its
 * own, so while the run is live the list is read again, 1 s after each change of history
 * and then less and less often (doubling to 15 s): a light read, never a storm.
 */
function useLiveAttempts(ns, run, version) {
  const live = run.status === "Running" || run.status === "Paused";
  const [attempts, setAttempts] = useState([]);
  useEffect(() => {
    if (!live) {
      setAttempts([]);
      return;
    }
    let stopped = false;
    let timer = 0;
    let wait = 1000;
    const read = () =>
      post("/workflows/attempts", { namespace: ns, workflow_id: run.workflow_id }).then(
        (r) => {
          if (stopped) return;
          setAttempts(r.attempts);
          timer = setTimeout(read, wait);
          wait = Math.min(wait * 2, 15_000);
        },
        () => {},
      );
    read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [run.workflow_id, live, version]);
  return attempts;
}

function Attempts({ ns, run, version }) {
  const attempts = useLiveAttempts(ns, run, version);
  if (attempts.length === 0) return null;
  return html`<h2>Live attempts</h2>
    <div class="panel"><table class="live-attempts">
      <tr><th>Run</th><th>Activity</th><th>Attempt</th><th>Capabilities</th><th></th></tr>
      ${attempts.map(
        (a) => html`<tr data-activity=${a.activity_id}>
          <td class="mono">${short(a.run_id)}</td><td>${a.activity_id}</td><td>${a.attempt}</td>
          <td>${a.capabilities.join(", ")}</td>
          <td>${link(attemptPath(ns, run.workflow_id, a), "Open transcript")}</td>
        </tr>`,
      )}
    </table></div>`;
}

function SignalForm({ onChange }) {
  return html`<label>Signal name <input name="signal" required onInput=${(e) => onChange("signal", e.target.value)} /></label>
    <label>Payload (JSON) <textarea class="short" name="payload" onInput=${(e) => onChange("payload", e.target.value)}>null</textarea></label>`;
}

function Controls({ ns, run, events, onDone }) {
  const [ask, setAsk] = useState(
    /** @type {{ kind: string, descendants?: { runId: string, workflow: string, depth: number }[] | null, error?: Failure } | null} */ (
      null
    ),
  );
  const [result, setResult] = useState(
    /** @type {{ kind: string, done?: any, error?: Failure } | null} */ (null),
  );
  const fields = useRef({ signal: "", payload: "null" });
  const live = run.status === "Running" || run.status === "Paused";
  const target = { namespace: ns, workflow_id: run.workflow_id, run_id: run.run_id };
  const open = async (kind) => {
    setResult(null);
    if (kind !== "cancel") return setAsk({ kind });
    setAsk({ kind, descendants: null });
    try {
      setAsk({ kind, descendants: await liveDescendants(ns, events) });
    } catch (error) {
      setAsk({ kind, descendants: [], error: failure(error) });
    }
  };
  const confirm = async () => {
    if (ask === null) return;
    const kind = ask.kind;
    setAsk(null);
    try {
      let body = target;
      if (kind === "signal") {
        body = {
          ...target,
          signal: fields.current.signal,
          payload: JSON.parse(fields.current.payload || "null"),
        };
      }
      const done = await post(`/workflows/${kind}`, body);
      setResult({ kind, done });
      onDone();
    } catch (error) {
      setResult({ kind, error: failure(error) });
    }
  };
  const dialog = () => {
    if (ask === null) return null;
    const close = () => setAsk(null);
    const on = (k, v) => {
      fields.current[k] = v;
    };
    if (ask.kind === "signal") {
      return html`<${Confirm} title="Send a signal" confirm="Send signal" onConfirm=${confirm} onClose=${close}><${SignalForm} onChange=${on} /><//>`;
    }
    if (ask.kind !== "cancel") {
      return html`<${Confirm} title=${`${ask.kind[0].toUpperCase()}${ask.kind.slice(1)} this run?`} confirm=${ask.kind}
        onConfirm=${confirm} onClose=${close}><p>Run <span class="mono">${run.run_id}</span>.</p><//>`;
    }
    const list = ask.descendants ?? null;
    return html`<${Confirm} title="Cancel this run?" confirm="Cancel run" danger=${true} onConfirm=${confirm} onClose=${close}>
      <p>Run <span class="mono">${run.run_id}</span> ends as Cancelled; its in-flight activities and live agent attempts are cancelled.</p>
      ${
        list === null
          ? html`<p class="loading">Finding its live descendants…</p>`
          : list.length === 0
            ? html`<p class="descendants" data-count="0">No live descendants.</p>`
            : html`<p>The cascade also cancels ${list.length} live descendant${list.length === 1 ? "" : "s"}:</p>
          <ul class="descendants" data-count=${list.length}>${list.map(
            (
              d,
            ) => html`<li data-descendant=${d.runId} style=${{ marginLeft: `${(d.depth - 1) * 16}px` }}>
              ${d.workflow} <span class="mono">${d.runId}</span></li>`,
          )}</ul>`
      }
      <${ErrorBox} error=${ask.error} />
    <//>`;
  };
  return html`<div class="row actions">
      <button type="button" disabled=${!live} onClick=${() => open("signal")}>Signal…</button>
      <button type="button" disabled=${run.status !== "Running"} onClick=${() => open("pause")}>Pause…</button>
      <button type="button" disabled=${run.status !== "Paused"} onClick=${() => open("resume")}>Resume…</button>
      <button type="button" class="danger" disabled=${!live} onClick=${() => open("cancel")}>Cancel…</button>
    </div>
    ${
      result?.done
        ? html`<div class="notice" role="status" data-control=${result.kind}>
        ${result.kind}: ${result.done.applied ? "applied" : "not applied (nothing to change)"}; the run is ${result.done.status}.</div>`
        : null
    }
    ${result?.error ? html`<${ErrorBox} error=${result.error} />` : null}
    ${dialog()}`;
}

function Summary({ run, events }) {
  const started = events.find((e) => e.type === "RunStarted");
  const end = run.ended_at ? Date.parse(run.ended_at) : Date.now();
  return html`<div class="panel summary-grid">
    <div><span class="muted">status</span> <span data-run-status=${run.status}><${Status} status=${run.status} /></span></div>
    <div><span class="muted">definition</span> ${run.definition_name ?? ""} <span class="mono muted">${digest(run.definition_version)}</span></div>
    <div><span class="muted">started</span> ${time(run.started_at)}</div>
    <div><span class="muted">${run.ended_at ? "ended" : "running for"}</span> ${run.ended_at ? time(run.ended_at) : ""} (${duration(end - Date.parse(run.started_at))})</div>
    ${started?.parent_run_id ? html`<div><span class="muted">parent</span> ${link(runPath(run.namespace, started.parent_run_id), short(started.parent_run_id), { class: "mono" })}</div>` : null}
    ${run.failure ? html`<div class="failure wide">${run.failure.code}: ${run.failure.message}</div>` : null}
    <div class="wide split">
      <div><div class="muted">input</div><pre class="json">${started ? json(started.input) : "…"}</pre></div>
      <div><div class="muted">output</div><pre class="json" data-output>${json(run.output)}</pre></div>
    </div>
  </div>`;
}

export function RunView({ route }) {
  const { ns, workflowId } = route;
  const history = useHistory(ns, workflowId);
  // Reads that new events trigger (describe, attempts, children) run at most twice a second.
  const version = useThrottled(history.events.length, 500);
  const describe = useLoad(
    () => post("/workflows/describe", { namespace: ns, workflow_id: workflowId }),
    [ns, workflowId, version, history.ended],
  );
  return html`<h1>Run <span class="mono">${workflowId}</span></h1>
    <${Loaded} state=${describe}>
      ${(d) => html`<${Summary} run=${d.run} events=${history.events} />
        <${Controls} ns=${ns} run=${d.run} events=${history.events} onDone=${describe.reload} />
        <${Pending} ns=${ns} pending=${d.pending_activities} total=${d.pending_total} />
        <${Workspaces} workspaces=${d.workspaces ?? []} />
        <${Attempts} ns=${ns} run=${d.run} version=${version} />`}
    <//>
    <h2>History <span class="muted small" data-live=${history.live}>(${history.events.length} events · ${history.live})</span></h2>
    <${ErrorBox} error=${history.error} />
    <div class="panel"><${Timeline} ns=${ns} events=${history.events} version=${version} /></div>`;
}
