// The matcher's rules, driven in-process through its transport-free interface: a hello
// opens a session behind a recording SessionSink, frames are handed in decoded, and what
// the matcher sends and reports is read back. The same rules are reached with real workers
// in test/workflow/rpc/matcher.test.ts.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import type { AttemptRef } from "../../../src/protocol/attempt.ts";
import type { DecodedHello } from "../../../src/protocol/worker-stream/decode.ts";
import type { ServerFrame } from "../../../src/protocol/worker-stream/frames.ts";
import type { MatcherEvents, TaskOffer } from "../../../src/workflow/engine/dispatcher.ts";
import { Matcher, type SessionSink } from "../../../src/workflow/matching/matcher.ts";

class RecordingSink implements SessionSink {
  readonly frames: ServerFrame[] = [];
  aborted: string | undefined;
  push(frame: ServerFrame): void {
    this.frames.push(frame);
  }
  flush(): void {}
  closed(): void {}
  abort(message: string): void {
    this.aborted = message;
  }
  /** The kinds of frame sent, for the attempt `ref` when given. */
  kinds(ref?: AttemptRef): string[] {
    return this.frames
      .filter((f) => ref === undefined || refOf(f)?.run_id === ref.run_id)
      .map((f) => f.frame);
  }
}

function refOf(frame: ServerFrame): AttemptRef | undefined {
  switch (frame.frame) {
    case "task":
      return frame.task.ref;
    case "cancel":
      return frame.cancel.ref;
    case "ack":
      return frame.ack.ref;
    default:
      return undefined;
  }
}

function recordingEvents() {
  const reported: { type: string; ref: AttemptRef }[] = [];
  const attached: AttemptRef[] = [];
  const events: MatcherEvents = {
    completed: (ref, _output, _ctx, receipt) => {
      reported.push({ type: "completed", ref });
      receipt.recorded();
    },
    failed: (ref, _failure, _ctx, receipt) => {
      reported.push({ type: "failed", ref });
      receipt.recorded();
    },
    attached: (refs) => void attached.push(...refs),
  };
  return { events, reported, attached };
}

const ref = (): AttemptRef => ({ run_id: randomUUID(), activity_id: 0, attempt: 1 });

function offerOf(r: AttemptRef, action = "work"): TaskOffer {
  return {
    ref: r,
    namespace: "default",
    taskQueue: "q",
    workflowId: "wf",
    action,
    inputJson: "null",
    startToCloseMs: 0,
    heartbeatMs: 0,
  };
}

function hello(
  name: string,
  options: { actions?: string[]; running?: AttemptRef[]; concurrency?: number } = {},
): DecodedHello {
  return {
    name,
    kind: "module",
    namespace: "default",
    task_queue: "q",
    concurrency: options.concurrency ?? 4,
    deployment: "",
    actions: (options.actions ?? ["work"]).map((action) => ({ action, capabilities: [] })),
    instance_id: randomUUID(),
    running: (options.running ?? []).map((r) => ({ ref: r, action: "work" })),
  };
}

const completion = (r: AttemptRef) =>
  ({ frame: "completion", completion: { ref: r, output_json: "1" } }) as const;

describe("matching rules", () => {
  test("re-attach withdraws the waiting copy: the worker that runs it keeps it", () => {
    const { events, attached } = recordingEvents();
    const matcher = new Matcher({ events });
    const a = ref();
    assert.equal(matcher.offer(offerOf(a)), "queued");
    assert.deepEqual(matcher.stats(), { sessions: 0, holding: 1, waiting: 1 });
    const sink = new RecordingSink();
    matcher.open(hello("w", { running: [a] }), sink);
    assert.deepEqual(attached, [a]);
    assert.deepEqual(matcher.stats(), { sessions: 1, holding: 1, waiting: 0 });
    // No second copy is sent: the worker already runs it.
    assert.deepEqual(sink.kinds(a), []);
  });

  test("a released attempt's late result is acknowledged but not reported", () => {
    const { events, reported } = recordingEvents();
    const matcher = new Matcher({ events });
    const sink = new RecordingSink();
    const session = matcher.open(hello("w"), sink);
    const a = ref();
    assert.equal(matcher.offer(offerOf(a)), "dispatched");
    matcher.release(a, "start_to_close timeout");
    matcher.receive(session, completion(a));
    assert.deepEqual(sink.kinds(a), ["task", "cancel", "ack"]);
    assert.deepEqual(reported, []);
    assert.deepEqual(matcher.stats(), { sessions: 1, holding: 0, waiting: 0 });
  });

  test("a settled attempt is remembered up to settledMemory, the oldest forgotten first", () => {
    const { events, reported, attached } = recordingEvents();
    const matcher = new Matcher({ events, settledMemory: 2 });
    const first = matcher.open(hello("w1"), new RecordingSink());
    const [a, b, c] = [ref(), ref(), ref()];
    for (const r of [a, b, c]) {
      matcher.offer(offerOf(r));
      matcher.receive(first, completion(r));
    }
    assert.equal(reported.length, 3);
    matcher.close(first);
    // A hello listing them: `c` is remembered as settled and stays settled; `a` was
    // forgotten, so (with no engine to ask) it is taken back on the hello's word.
    matcher.open(hello("w2", { running: [a, c] }), new RecordingSink());
    assert.deepEqual(attached, [a]);
    assert.deepEqual(matcher.stats(), { sessions: 1, holding: 1, waiting: 0 });
  });

  test("a run's live attempts: every one a live worker holds, as attempts come and go", () => {
    const { events, attached } = recordingEvents();
    const matcher = new Matcher({ events });
    const sink = new RecordingSink();
    const first = matcher.open(hello("w1", { concurrency: 8 }), sink);
    const run = randomUUID();
    const attempt = (activity_id: number): AttemptRef => ({ run_id: run, activity_id, attempt: 1 });
    const [a, b, c, d] = [attempt(1), attempt(2), attempt(3), attempt(4)];
    const other = ref();
    for (const r of [a, b, other, c, d]) assert.equal(matcher.offer(offerOf(r)), "dispatched");
    const live = () =>
      matcher
        .liveAttempts(run)
        .map((l) => l.ref.activity_id)
        .sort();
    assert.deepEqual(live(), [1, 2, 3, 4]);
    assert.deepEqual(
      matcher.liveAttempts(other.run_id).map((l) => l.ref),
      [other],
    );
    // Settled in the middle, at the newest and at the oldest of the run's attempts.
    matcher.receive(first, completion(c));
    assert.deepEqual(live(), [1, 2, 4]);
    matcher.receive(first, completion(d));
    assert.deepEqual(live(), [1, 2]);
    matcher.receive(first, completion(a));
    assert.deepEqual(live(), [2]);
    assert.equal(matcher.workers()[0]!.busy, 2);
    // Detached attempts are held but not live; re-attached, they are live again and count
    // against the new session's slots; a released one is not kept at the close.
    const e = attempt(5);
    assert.equal(matcher.offer(offerOf(e)), "dispatched");
    matcher.release(other, "start_to_close timeout");
    matcher.close(first);
    assert.deepEqual(live(), []);
    assert.deepEqual(matcher.stats(), { sessions: 0, holding: 2, waiting: 0 });
    const second = matcher.open(hello("w2", { running: [e, b], concurrency: 3 }), sink);
    assert.deepEqual(attached, [e, b]);
    assert.deepEqual(live(), [2, 5]);
    assert.equal(matcher.workers()[0]!.busy, 2);
    // One slot left: the next offer is placed, the one after waits.
    const [f, g] = [attempt(6), attempt(7)];
    assert.equal(matcher.offer(offerOf(f)), "dispatched");
    assert.equal(matcher.offer(offerOf(g)), "queued");
    assert.deepEqual(live(), [2, 5, 6]);
    matcher.receive(second, completion(b));
    // The freed slot took the waiting attempt.
    assert.deepEqual(live(), [5, 6, 7]);
    assert.equal(matcher.workers()[0]!.busy, 3);
  });

  test("a result is reported with when its attempt was offered, kept across a re-attach", () => {
    const offeredAt = new Map<string, number | undefined>();
    const events: MatcherEvents = {
      completed: (r, _output, _ctx, receipt, at) => {
        offeredAt.set(r.run_id, at);
        receipt.recorded();
      },
      failed: (r, _failure, _ctx, receipt, at) => {
        offeredAt.set(r.run_id, at);
        receipt.recorded();
      },
    };
    const matcher = new Matcher({ events });
    const before = performance.now();
    const [placed, waited, kept, unknown] = [ref(), ref(), ref(), ref()];
    const first = matcher.open(hello("w1", { concurrency: 1 }), new RecordingSink());
    assert.equal(matcher.offer(offerOf(placed)), "dispatched");
    assert.equal(matcher.offer(offerOf(waited)), "queued");
    const offered = performance.now();
    matcher.receive(first, completion(placed));
    // The freed slot took the waiting attempt: its time is still its offer's.
    matcher.receive(first, {
      frame: "failure",
      failure: { ref: waited, code: "x", message: "m", non_retryable: false },
    });
    assert.equal(matcher.offer(offerOf(kept)), "dispatched");
    matcher.close(first);
    const second = matcher.open(hello("w2", { running: [kept, unknown] }), new RecordingSink());
    matcher.receive(second, completion(kept));
    matcher.receive(second, completion(unknown));
    for (const r of [placed, waited]) {
      const at = offeredAt.get(r.run_id)!;
      assert.ok(at >= before && at <= offered, `${at} not in [${before}, ${offered}]`);
    }
    assert.ok(offeredAt.get(kept.run_id)! >= offered);
    // Taken on the hello's word, never offered here: no offer time.
    assert.ok(Number.isNaN(offeredAt.get(unknown.run_id)));
  });

  test("offers go round robin over the sessions with a free slot for the action", () => {
    const { events } = recordingEvents();
    const matcher = new Matcher({ events });
    const sinks = [new RecordingSink(), new RecordingSink(), new RecordingSink()];
    matcher.open(hello("w0"), sinks[0]!);
    matcher.open(hello("other", { actions: ["else"] }), new RecordingSink());
    matcher.open(hello("w1", { concurrency: 1 }), sinks[1]!);
    matcher.open(hello("w2"), sinks[2]!);
    const order: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = ref();
      assert.equal(matcher.offer(offerOf(r)), "dispatched");
      order.push(sinks.findIndex((s) => s.kinds(r).includes("task")));
    }
    // w1 serves one at a time; the session without the action is never chosen.
    assert.deepEqual(order, [0, 1, 2, 0, 2, 0]);
  });
});
