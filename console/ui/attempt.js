/**
 * A live agent attempt: its transcript as it grows (the transcript stream; a read every
 * second where the server has none) and the interventions the server relays to the worker —
 * inject a message (Normal or Interrupt), pause and resume, a new budget, approve or deny a
 * pending tool call, cancel — each showing the outcome the server answered (Applied,
 * CapabilityNotSupported, StaleTarget).
 */

import { follow, post, sleep } from "/ui/api.js";
import {
  Confirm,
  ErrorBox,
  failure,
  html,
  json,
  link,
  runPath,
  short,
  time,
  useEffect,
  useLoad,
  useState,
} from "/ui/lib.js";

/** @typedef {import("/ui/lib.js").Failure} Failure */

function useTranscript(target) {
  const [state, setState] = useState(
    /** @type {{ entries: object[], ended: boolean, live: string, error: Failure | null }} */ ({
      entries: [],
      ended: false,
      live: "connecting",
      error: null,
    }),
  );
  const key = JSON.stringify(target);
  useEffect(() => {
    const add = (fresh) => setState((s) => ({ ...s, entries: [...s.entries, ...fresh] }));
    const fallback = async (seen, signal) => {
      setState((s) => ({ ...s, live: "read every second" }));
      while (!signal.aborted) {
        try {
          const t = await post("/workflows/transcript", target, signal);
          add(t.entries.slice(seen.count));
          seen.count = Math.max(seen.count, t.entries.length);
          const live = await post(
            "/workflows/attempts",
            { namespace: target.namespace, workflow_id: target.workflow_id },
            signal,
          );
          const still = live.attempts.some(
            (a) =>
              a.run_id === target.run_id &&
              a.activity_id === target.activity_id &&
              a.attempt === target.attempt,
          );
          if (
            !still &&
            seen.count === (await post("/workflows/transcript", target, signal)).entries.length
          ) {
            return setState((s) => ({ ...s, ended: true, live: "ended" }));
          }
        } catch (error) {
          if (signal.aborted) return;
          setState((s) => ({ ...s, error: failure(error) }));
        }
        await sleep(1000, signal);
      }
    };
    setState((s) => ({ ...s, live: "stream" }));
    return follow("/workflows/transcript/stream", target, {
      onItem: (data) => add([data.entry]),
      onEnd: () => setState((s) => ({ ...s, ended: true, live: "ended" })),
      onError: (error) => setState((s) => ({ ...s, error })),
      fallback,
    });
  }, [key]);
  return state;
}

function describeControl(kind) {
  switch (kind.kind) {
    case "InjectMessage":
      return `InjectMessage (${kind.priority.priority}): ${kind.text}`;
    case "PauseResume":
      return kind.paused ? "PauseResume: pause" : "PauseResume: resume";
    case "UpdateBudget":
      return `UpdateBudget: max_tokens ${kind.max_tokens ?? "unchanged"}, max_turns ${kind.max_turns ?? "unchanged"}`;
    case "RespondToApproval":
      return `RespondToApproval ${kind.call_id}: ${kind.decision.decision}${kind.note ? ` (${kind.note})` : ""}`;
    case "Cancel":
      return `Cancel: ${kind.reason}`;
    default:
      return kind.kind;
  }
}

function Entry({ e, index }) {
  const body = {
    user_turn: () => html`<span class="muted">${e.source}</span> <pre>${e.text}</pre>`,
    model_turn:
      () => html`${e.content ? html`<pre>${typeof e.content === "string" ? e.content : json(e.content)}</pre>` : null}
      ${e.tool_calls.length > 0 ? html`<div class="muted">asks for ${e.tool_calls.map((c) => c.function?.name ?? c.name ?? "?").join(", ")}</div>` : null}
      <span class="muted small">tokens ${JSON.stringify(e.tokens)}</span>`,
    tool_call: () =>
      html`<span class="mono">${e.name}</span> <code>${typeof e.arguments === "string" ? e.arguments : JSON.stringify(e.arguments)}</code> <span class="muted">(${e.call_id})</span>`,
    tool_result: () => html`<span class="muted">${e.call_id}</span> <pre>${e.content}</pre>`,
    approval: () =>
      html`<span class="mono">${e.call_id}</span> <span class=${`badge approval ${e.state}`}>${e.state}</span>${e.note ? ` ${e.note}` : ""}`,
    control: () =>
      html`<strong>${describeControl(e.control.kind)}</strong> <span class="muted">by ${e.control.subject} at ${time(e.control.at)}</span>`,
    interrupted: () => html`<span class="muted">the model call in flight was interrupted</span>`,
    end: () => html`budget stop: ${e.reason}`,
  }[e.type];
  return html`<li class=${`entry ${e.type}`} data-type=${e.type} data-index=${index}>
    <span class="tag">${e.type.replace("_", " ")}</span>
    <div class="content">${body ? body() : html`<pre>${json(e)}</pre>`}</div>
  </li>`;
}

/** Tool calls waiting for an answer: a pending approval with no later decision. */
function pendingApprovals(entries) {
  const open = new Map();
  for (const e of entries) {
    if (e.type !== "approval") continue;
    if (e.state === "pending") open.set(JSON.stringify(e.call_id), e.call_id);
    else open.delete(JSON.stringify(e.call_id));
  }
  return [...open.values()];
}

function Interventions({ target, capabilities, entries, ended }) {
  const [outcomes, setOutcomes] = useState(
    /** @type {{ label: string, at: Date, outcome?: string, error?: Failure }[]} */ ([]),
  );
  const [text, setText] = useState("");
  const [priority, setPriority] = useState("Normal");
  const [budget, setBudget] = useState({ max_tokens: "", max_turns: "" });
  const [note, setNote] = useState("");
  const [cancelling, setCancelling] = useState(false);
  const send = async (label, kind) => {
    try {
      const r = await post("/workflows/intervene", { ...target, kind });
      setOutcomes((o) =>
        [{ label, outcome: r.outcome.outcome, at: new Date() }, ...o].slice(0, 20),
      );
    } catch (error) {
      setOutcomes((o) => [{ label, error: failure(error), at: new Date() }, ...o].slice(0, 20));
    }
  };
  const inject = (event) => {
    event.preventDefault();
    send(`InjectMessage (${priority})`, { kind: "InjectMessage", text, priority: { priority } });
    setText("");
  };
  const num = (v) => (v.trim() === "" ? null : Number(v));
  const updateBudget = (event) => {
    event.preventDefault();
    send("UpdateBudget", {
      kind: "UpdateBudget",
      max_tokens: num(budget.max_tokens),
      max_turns: num(budget.max_turns),
    });
  };
  const answer = (call_id, decision) =>
    send(`${decision} ${call_id}`, {
      kind: "RespondToApproval",
      call_id,
      decision: { decision },
      note: note.trim() || null,
    });
  const approvals = pendingApprovals(entries);
  return html`<div class="panel interventions">
    <div class="muted small">Capabilities: ${capabilities === null ? "not live" : capabilities.join(", ") || "none"}</div>
    <form class="row" onSubmit=${inject}>
      <input name="message" aria-label="Message" placeholder="message to the agent" value=${text} onInput=${(e) => setText(e.target.value)} required />
      <select name="priority" aria-label="Priority" value=${priority} onChange=${(e) => setPriority(e.target.value)}>
        <option value="Normal">Normal</option><option value="Interrupt">Interrupt</option>
      </select>
      <button type="submit" class="primary">Inject</button>
    </form>
    <div class="row">
      <button type="button" onClick=${() => send("Pause", { kind: "PauseResume", paused: true })}>Pause</button>
      <button type="button" onClick=${() => send("Resume", { kind: "PauseResume", paused: false })}>Resume</button>
      <form class="row" onSubmit=${updateBudget}>
        <input name="max_tokens" aria-label="max tokens" placeholder="max tokens" inputmode="numeric" value=${budget.max_tokens} onInput=${(e) => setBudget({ ...budget, max_tokens: e.target.value })} />
        <input name="max_turns" aria-label="max turns" placeholder="max turns" inputmode="numeric" value=${budget.max_turns} onInput=${(e) => setBudget({ ...budget, max_turns: e.target.value })} />
        <button type="submit">Update budget</button>
      </form>
      <button type="button" class="danger" onClick=${() => setCancelling(true)}>Cancel attempt…</button>
    </div>
    ${
      approvals.length > 0
        ? html`<div class="approvals"><strong>Waiting for approval:</strong>
          <input name="note" aria-label="Note" placeholder="note (optional)" value=${note} onInput=${(e) => setNote(e.target.value)} />
          ${approvals.map(
            (
              id,
            ) => html`<span class="row approval-call" data-call-id=${id}><span class="mono">${id}</span>
              <button type="button" class="primary" onClick=${() => answer(id, "Approve")}>Approve</button>
              <button type="button" class="danger" onClick=${() => answer(id, "Deny")}>Deny</button></span>`,
          )}</div>`
        : null
    }
    ${ended ? html`<p class="muted">This attempt is over: interventions answer StaleTarget.</p>` : null}
    <ul class="outcomes" aria-label="outcomes">
      ${outcomes.map(
        (o) => html`<li role="status" data-outcome=${o.outcome ?? o.error?.code}>
          <span class="muted">${time(o.at)}</span> ${o.label} → <strong>${o.outcome ?? `${o.error?.code}: ${o.error?.message}`}</strong></li>`,
      )}
    </ul>
    ${
      cancelling
        ? html`<${Confirm} title="Cancel this attempt?" confirm="Cancel attempt" danger=${true}
          onClose=${() => setCancelling(false)}
          onConfirm=${() => {
            setCancelling(false);
            send("Cancel", { kind: "Cancel", reason: "cancelled from the console" });
          }}>
          <p>The attempt ends with failure <code>cancelled</code>; it is not retried, so the activity fails.</p>
        <//>`
        : null
    }
  </div>`;
}

export function AttemptView({ route }) {
  const { ns, workflowId, ref } = route;
  const target = { namespace: ns, workflow_id: workflowId, ...ref };
  const transcript = useTranscript(target);
  const live = useLoad(
    () => post("/workflows/attempts", { namespace: ns, workflow_id: workflowId }),
    [workflowId, transcript.ended],
  );
  const mine = live.data?.attempts.find(
    (a) =>
      a.run_id === ref.run_id && a.activity_id === ref.activity_id && a.attempt === ref.attempt,
  );
  return html`<h1>Attempt ${ref.attempt} of activity ${ref.activity_id}</h1>
    <p>Run ${link(runPath(ns, workflowId), short(workflowId), { class: "mono" })}
      <span class="muted" data-live=${transcript.live}> · transcript ${transcript.live}</span></p>
    <${Interventions} target=${target} capabilities=${mine ? mine.capabilities : null} entries=${transcript.entries} ended=${transcript.ended} />
    <h2>Transcript <span class="muted small" data-entries=${transcript.entries.length}>(${transcript.entries.length} entries)</span></h2>
    <${ErrorBox} error=${transcript.error} />
    <ol class="transcript">${transcript.entries.map((e, i) => html`<${Entry} e=${e} index=${i} />`)}</ol>`;
}
