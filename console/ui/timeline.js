/**
 * A run's history as a timeline: each activity with its attempts (when each became due, how
 * long it ran, how it ended: a retry after a failure or timeout shows as the next attempt),
 * timers, signals, pauses, children (a tree that opens: a child's own history is read when
 * it is opened) and the run's end. Bars place each attempt on the run's span. `model` is a
 * pure function of the events, so the view is the same whether they came by stream or read.
 */

import { background, post, readHistory } from "/ui/api.js";
import {
  duration,
  html,
  json,
  link,
  runPath,
  Status,
  short,
  time,
  useEffect,
  useLoad,
  useState,
} from "/ui/lib.js";

function activity(items, byId, e) {
  let a = byId.get(e.activity_id);
  if (a === undefined) {
    a = {
      kind: "activity",
      at: e.at,
      id: e.activity_id,
      step: e.step_id,
      action: e.action,
      queue: e.task_queue,
      attempts: [],
    };
    byId.set(e.activity_id, a);
    items.push(a);
  }
  return a;
}

const attemptOf = (a, n) => a.attempts.find((t) => t.attempt === n);

/** The timeline items of a run's events, in order of their first event. */
export function model(events) {
  const items = [];
  const activities = new Map();
  const timers = new Map();
  const children = new Map();
  for (const e of events) {
    switch (e.type) {
      case "ActivityScheduled": {
        const a = activity(items, activities, e);
        a.attempts.push({
          attempt: e.attempt,
          scheduled: e.at,
          due: Math.max(e.at, e.dispatch_at),
          outcome: "pending",
          input: e.input,
        });
        break;
      }
      case "ActivityCompleted":
      case "ActivityFailed":
      case "ActivityTimedOut": {
        const t = attemptOf(activity(items, activities, e), e.attempt);
        if (t === undefined) break;
        t.ended = e.at;
        t.outcome = {
          ActivityCompleted: "completed",
          ActivityFailed: "failed",
          ActivityTimedOut: "timed_out",
        }[e.type];
        if (e.type === "ActivityFailed") t.failure = `${e.code}: ${e.message}`;
        if (e.type === "ActivityTimedOut") t.failure = `timed out (${e.timeout})`;
        if (e.type === "ActivityCompleted") t.output = e.output;
        break;
      }
      case "TimerStarted": {
        const t = { kind: "timer", at: e.at, id: e.timer_id, fireAt: e.fire_at };
        timers.set(e.timer_id, t);
        items.push(t);
        break;
      }
      case "TimerFired": {
        const t = timers.get(e.timer_id);
        if (t) t.fired = e.at;
        break;
      }
      case "ChildStarted": {
        const c = {
          kind: "child",
          at: e.at,
          runId: e.child_run_id,
          step: e.step_id,
          workflow: e.workflow,
        };
        children.set(e.child_run_id, c);
        items.push(c);
        break;
      }
      case "ChildEnded": {
        const c = children.get(e.child_run_id);
        if (c) Object.assign(c, { ended: e.at, status: e.status, message: e.message });
        break;
      }
      case "SignalReceived":
        items.push({ kind: "signal", at: e.at, name: e.signal, payload: e.payload });
        break;
      default:
        items.push({ kind: "run", at: e.at, event: e });
    }
  }
  return items;
}

/** The runs a cancel would reach: live children, and theirs, read from their histories. */
export async function liveDescendants(ns, events, depth = 1) {
  const out = [];
  for (const item of model(events)) {
    if (item.kind !== "child" || item.status !== undefined) continue;
    const child = await readHistory({ namespace: ns, workflow_id: item.runId });
    if (child.some((e) => ["RunCompleted", "RunFailed", "RunCancelled"].includes(e.type))) continue;
    out.push({ runId: item.runId, workflow: item.workflow, depth });
    out.push(...(await liveDescendants(ns, child, depth + 1)));
  }
  return out;
}

function Bar({ span, from, to, outcome }) {
  const width = span.end - span.start || 1;
  const left = Math.max(0, ((from - span.start) / width) * 100);
  const w = Math.max(0.6, (((to ?? span.end) - from) / width) * 100);
  return html`<div class="track"><div class=${`bar ${outcome}`} style=${{ left: `${left}%`, width: `${Math.min(w, 100 - left)}%` }}></div></div>`;
}

function Attempt({ t, span }) {
  const outcome = typeof t.outcome === "string" ? t.outcome : "pending";
  return html`<li class=${`attempt ${outcome}`} data-attempt=${t.attempt} data-outcome=${outcome}>
    <span class="label">${t.attempt > 1 ? html`<span class="badge retry">retry</span> ` : null}attempt ${t.attempt}</span>
    <span class="muted">${time(t.due)}</span>
    <span>${outcome === "pending" ? "running…" : `${outcome.replace("_", " ")} after ${duration(t.ended - t.due)}`}</span>
    <${Bar} span=${span} from=${t.due} to=${t.ended} outcome=${outcome} />
    ${t.failure ? html`<div class="failure">${t.failure}</div>` : null}
  </li>`;
}

const LIVE = ["Running", "Paused"];

/**
 * A child's status: its ChildEnded when the parent recorded one; else, while the parent is
 * live, the child is too (a parent waits for its children). Once the parent has ended (a
 * cancel cascades to the children in later commits), or when the node is open, it is read,
 * and read again each second a few times while it is still live.
 */
function useChildStatus(ns, item, parentEnded, open, version) {
  const [status, setStatus] = useState(item.status);
  useEffect(() => {
    if (item.status !== undefined || (!parentEnded && !open)) {
      setStatus(item.status);
      return;
    }
    let live = true;
    let timer = 0;
    let tries = 0;
    const read = () =>
      background(() =>
        post("/workflows/describe", { namespace: ns, workflow_id: item.runId }),
      ).then(
        (d) => {
          if (!live) return;
          setStatus(d.run.status);
          if (parentEnded && LIVE.includes(d.run.status) && ++tries < 10)
            timer = setTimeout(read, 1000);
        },
        () => {},
      );
    read();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [item.runId, item.status, parentEnded, open, version]);
  return status;
}

function ChildNode({ ns, item, span, version, parentEnded }) {
  const [open, setOpen] = useState(false);
  const status = useChildStatus(ns, item, parentEnded, open, version);
  return html`<li class="item child" data-child=${item.runId} data-status=${status ?? "live"}>
    <div class="head">
      <button type="button" class="toggle" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? "▾" : "▸"}</button>
      <span class="kind">child</span>
      <strong>${item.step}</strong> → ${item.workflow}
      ${link(runPath(ns, item.runId), short(item.runId), { class: "mono" })}
      ${status ? html`<${Status} status=${status} />` : html`<span class="badge status running">live</span>`}
      <span class="muted">${time(item.at)}</span>
    </div>
    <${Bar} span=${span} from=${item.at} to=${item.ended} outcome=${(status ?? "running").toLowerCase()} />
    ${item.message ? html`<div class="failure">${item.message}</div>` : null}
    ${open ? html`<${ChildHistory} ns=${ns} runId=${item.runId} version=${version} />` : null}
  </li>`;
}

function ChildHistory({ ns, runId, version }) {
  const state = useLoad(() => readHistory({ namespace: ns, workflow_id: runId }), [runId, version]);
  if (state.error) return html`<div class="error">${state.error.message}</div>`;
  if (!state.data) return html`<p class="loading">Loading…</p>`;
  return html`<div class="subtree"><${Timeline} ns=${ns} events=${state.data} version=${version} /></div>`;
}

function RunEvent({ e }) {
  const detail = {
    RunStarted: () => (e.parent_run_id ? `child of ${short(e.parent_run_id)}` : ""),
    RunFailed: () => `${e.code}: ${e.message}`,
    RunCancelled: () => e.reason,
  }[e.type];
  return html`<li class=${`item run ${e.type}`} data-event=${e.type}>
    <div class="head"><span class="kind">run</span><strong>${e.type.replace(/^Run/, "")}</strong>
      <span class="muted">${time(e.at)}</span> ${detail ? html`<span>${detail()}</span>` : null}</div>
  </li>`;
}

/** One timeline item; keyed by its place, so a child node keeps its state as items arrive. */
function Item({ ns, item, span, version, ended }) {
  switch (item.kind) {
    case "activity":
      return html`<li class="item activity" data-activity=${item.id} data-step=${item.step}>
        <div class="head"><span class="kind">activity ${item.id}</span><strong>${item.step}</strong>
          <span class="mono">${item.action}</span> <span class="muted">on ${item.queue}</span>
          ${item.attempts.length > 1 ? html`<span class="badge retry">${item.attempts.length} attempts</span>` : null}</div>
        <ul class="attempts">${item.attempts.map((t) => html`<${Attempt} t=${t} span=${span} />`)}</ul>
      </li>`;
    case "timer":
      return html`<li class="item timer" data-timer=${item.id}>
        <div class="head"><span class="kind">timer</span><strong>${item.id}</strong>
          <span class="muted">${time(item.at)}</span>
          <span>${item.fired ? `fired after ${duration(item.fired - item.at)}` : `fires at ${time(item.fireAt)}`}</span></div>
        <${Bar} span=${span} from=${item.at} to=${item.fired ?? item.fireAt} outcome="timer" />
      </li>`;
    case "signal":
      return html`<li class="item signal" data-signal=${item.name}>
        <div class="head"><span class="kind">signal</span><strong>${item.name}</strong>
          <span class="muted">${time(item.at)}</span> <code>${JSON.stringify(item.payload)}</code></div>
      </li>`;
    case "child":
      return html`<${ChildNode} ns=${ns} item=${item} span=${span} version=${version} parentEnded=${ended} />`;
    default:
      return html`<${RunEvent} e=${item.event} />`;
  }
}

/** Items a timeline shows at first, the newest; each "show older" adds as many again. */
export const TIMELINE_WINDOW = 200;

/**
 * The timeline of `events`; `version` changes when more events arrive. Only the newest
 * items are drawn (a run of thousands of events would make thousands of rows): older ones
 * come a window at a time on request.
 */
export function Timeline({ ns, events, version = events.length }) {
  const [shown, setShown] = useState(TIMELINE_WINDOW);
  const all = model(events);
  const hidden = Math.max(0, all.length - shown);
  const items = all.slice(hidden);
  const start = events[0]?.at ?? Date.now();
  const last = events.at(-1)?.at ?? start;
  const ended = events.some((e) => ["RunCompleted", "RunFailed", "RunCancelled"].includes(e.type));
  const span = { start, end: ended ? last : Math.max(last, Date.now()) };
  return html`<ol class="timeline" data-items=${all.length} data-hidden=${hidden}>
    ${
      hidden > 0
        ? html`<li class="older"><button type="button" data-older onClick=${() => setShown(shown + TIMELINE_WINDOW)}>
            Show ${Math.min(hidden, TIMELINE_WINDOW)} older (${hidden} not shown)</button></li>`
        : null
    }
    ${items.map(
      (item, i) =>
        html`<${Item} key=${hidden + i} ns=${ns} item=${item} span=${span} version=${version} ended=${ended} />`,
    )}
  </ol>`;
}

export { json };
