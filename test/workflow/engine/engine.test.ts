// The engine end to end with real worker processes: the engine and the matcher in this
// process over the server's SQLite run store, `skein worker` processes serving module
// actions. The same scenarios through the real `skein serve` process (including SIGKILL of
// the server mid-run) are in test/workflow/http/workflows.test.ts.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  parseDefinition,
  type WorkflowDefinition,
} from "../../../src/workflow/definitions/index.ts";
import { answerOf } from "../../../src/workflow/engine/dispatcher.ts";
import { Engine, type HistoryEvent, type RunState } from "../../../src/workflow/engine/index.ts";
import { startWorkerEndpoint } from "../../../src/workflow/rpc/server.ts";
import { openRuns } from "../../support/sqlite-runs.ts";
import { until } from "../../support/until.ts";
import {
  ACTIVITIES,
  sessions,
  spawnWorker,
  tempDir,
  tokenFile,
  writeJson,
} from "../../support/worker-endpoint.ts";

async function setup(options: { reattachGraceMs?: number } = {}) {
  const dir = await tempDir();
  const store = openRuns(dir);
  const ended = new Map<string, (state: RunState) => void>();
  const engine = new Engine({
    store,
    definitions: async () => assert.fail("no recovery in this test"),
    onRunEnded: (runId, state) => ended.get(runId)?.(state),
    ...options,
  });
  const endpoint = await startWorkerEndpoint("127.0.0.1:0", {
    verify: async () => ({ subject: "t", worker: true, namespaces: "*" }),
    namespaceGate: async () => true,
    events: engine.matcherEvents,
  });
  engine.attach(endpoint.matcher);
  const doc = await writeJson(dir, "worker.json", {
    name: "w",
    task_queue: "q",
    actions: Object.fromEntries(
      ["inc", "flaky", "hold", "holdUntil", "stallFirst"].map((name) => [
        name,
        { module: ACTIVITIES, export: name },
      ]),
    ),
  });
  const token = await tokenFile(dir, "any");
  const worker = (...extra: string[]) =>
    spawnWorker([
      "module",
      doc,
      "--endpoint",
      `127.0.0.1:${endpoint.port}`,
      "--token-file",
      token,
      ...extra,
    ]);
  const run = (definition: WorkflowDefinition, input: unknown) => {
    const runId = randomUUID();
    const done = new Promise<RunState>((resolve) => ended.set(runId, resolve));
    return engine
      .start({
        runId,
        workflowId: randomUUID(),
        namespace: "default",
        definition,
        inputJson: JSON.stringify(input),
      })
      .then(() => ({ runId, done }));
  };
  const close = async () => {
    engine.close();
    await endpoint.close();
  };
  return { dir, store, engine, endpoint, worker, run, close };
}

/** The timed attempt's start-to-close and heartbeat allowances in the free-slot test. */
const ALLOWANCE_MS = 2500;

const completions = (history: readonly HistoryEvent[]) =>
  history.filter((e) => e.type === "ActivityCompleted").map((e) => [e.activity_id, e.attempt]);

const timeouts = (history: readonly HistoryEvent[]) =>
  history
    .filter((e) => e.type === "ActivityTimedOut")
    .map((e) => e.type === "ActivityTimedOut" && [e.activity_id, e.attempt, e.timeout]);

type Setup = Awaited<ReturnType<typeof setup>>;

/** Waits until a worker holds an attempt of `runId`. */
async function holding(t: Setup, runId: string): Promise<void> {
  await until("a worker to hold the attempt", () =>
    t.endpoint.matcher.liveAttempts(runId).length > 0 ? true : undefined,
  );
}

/**
 * Runs the one-step YAML workflow `source` with a worker that is SIGKILLed once it holds the
 * attempt and a second worker started after; the run's end status and its history.
 */
async function killHolder(
  options: { reattachGraceMs?: number },
  source: string,
): Promise<{ status: string; history: HistoryEvent[] }> {
  const t = await setup(options);
  const first = t.worker();
  let second: ReturnType<typeof t.worker> | undefined;
  // The run's input names a file that exists only once the first worker is killed (for
  // holdUntil: what that worker takes holds, what the second takes finishes).
  const release = join(t.dir, "release");
  try {
    await sessions(t.endpoint, 1);
    const { runId, done } = await t.run(parseDefinition(source, "yaml"), { file: release });
    await holding(t, runId);
    first.kill("SIGKILL");
    await first.exited;
    await writeFile(release, "");
    second = t.worker();
    const { status } = await done;
    return { status, history: await t.store.history(runId) };
  } finally {
    first.kill("SIGKILL");
    second?.kill();
    await second?.exited;
    await t.close();
  }
}

describe("engine with real workers", () => {
  test("a multi-step workflow passes outputs between steps and retries a failing attempt", async () => {
    const t = await setup();
    const w = t.worker();
    try {
      const def = parseDefinition(
        `
name: chain
task_queue: q
retry: { max_attempts: 3, initial_backoff_ms: 20 }
steps:
  - { id: a, call: { action: inc, input: "{ 'n': input.n }" } }
  - { id: b, call: { action: flaky, input: "{ 'n': steps.a.n }" } }
  - { id: c, call: { action: inc, input: "{ 'n': steps.b.n }" } }
output: "{ 'result': steps.c.n, 'first': steps.a.n }"
`,
        "yaml",
      );
      const { runId, done } = await t.run(def, { n: 1 });
      const state = await done;
      assert.equal(state.status, "Completed");
      const history = await t.store.history(runId);
      const end = history.at(-1)!;
      assert.deepEqual(end.type === "RunCompleted" && JSON.parse(end.output_json), {
        result: 5,
        first: 2,
      });
      assert.deepEqual(completions(history), [
        [1, 1],
        [2, 2],
        [3, 1],
      ]);
      const failure = history.find((e) => e.type === "ActivityFailed");
      assert.ok(failure?.type === "ActivityFailed");
      assert.deepEqual([failure.activity_id, failure.attempt, failure.code], [2, 1, "flaky"]);
      const retry = history.find((e) => e.type === "ActivityScheduled" && e.attempt === 2);
      assert.ok(retry?.type === "ActivityScheduled");
      assert.equal(retry.dispatch_at, failure.at + 20, "the retry waits the initial backoff");
      assert.equal(retry.input_json, '{"n":2}', "the retry runs the same input");
    } finally {
      w.kill();
      await w.exited;
      await t.close();
    }
  });

  test("timeouts start when a worker holds the attempt, not while it waits for a free slot", async () => {
    const t = await setup();
    const w = t.worker("--concurrency", "1");
    const release = join(t.dir, "release");
    try {
      await sessions(t.endpoint, 1);
      // The only slot is held, with no timeout of its own, until the test says finish.
      const blocker = parseDefinition(
        `
name: blocker
task_queue: q
steps:
  - { id: b, call: { action: holdUntil, input: "{ 'file': input.file }" } }
`,
        "yaml",
      );
      const timed = parseDefinition(
        `
name: slot
task_queue: q
retry: { max_attempts: 1 }
steps:
  - id: h
    call: { action: inc, input: "{ 'n': 1 }", start_to_close_ms: ${ALLOWANCE_MS}, heartbeat_ms: ${ALLOWANCE_MS} }
`,
        "yaml",
      );
      const first = await t.run(blocker, { file: release });
      await until("the blocker to hold the only slot", () =>
        t.endpoint.matcher.liveAttempts(first.runId).length === 1 ? true : undefined,
      );
      const second = await t.run(timed, {});
      const scheduled = await until("the timed attempt to wait for the slot", async () => {
        const waiting = t.endpoint.matcher.backlog("default", "q").some((b) => b.waiting === 1);
        const event = (await t.store.history(second.runId)).find(
          (e) => e.type === "ActivityScheduled",
        );
        return waiting && event?.type === "ActivityScheduled" ? event : undefined;
      });
      // It waits in the backlog well past both allowances counted from its scheduling (a
      // loaded machine only makes the wait longer), and is not timed out.
      await until(
        "both allowances to have run out since the attempt was scheduled",
        () => Date.now() > scheduled.at + ALLOWANCE_MS + 1000,
        { timeoutMs: ALLOWANCE_MS + 30_000, intervalMs: 100 },
      );
      const waited = await t.store.history(second.runId);
      assert.equal(waited.filter((e) => e.type === "ActivityTimedOut").length, 0);
      assert.equal(t.endpoint.matcher.liveAttempts(second.runId).length, 0, "still waiting");
      // The slot frees; the attempt is held from now on, and its allowances count from
      // then. It finishes well inside them, unless the machine is slowed past them: then it
      // times out, but never before both have run out since the release (a test that
      // required the finish would fail by load, not by an early timeout).
      const releasedAt = Date.now();
      await writeFile(release, "");
      const states = await Promise.all([first.done, second.done]);
      assert.equal(states[0]!.status, "Completed");
      const history = await t.store.history(second.runId);
      const timedOut = history.filter((e) => e.type === "ActivityTimedOut");
      for (const e of timedOut) {
        assert.ok(
          e.at >= releasedAt + ALLOWANCE_MS,
          `timed out ${e.at - releasedAt} ms after the release`,
        );
      }
      if (timedOut.length === 0) {
        assert.equal(states[1]!.status, "Completed");
        assert.deepEqual(completions(history), [[1, 1]]);
      }
    } finally {
      w.kill();
      await t.close();
    }
  });

  test("a heartbeat timeout after SIGKILL of the worker retries on another worker", async () => {
    const { status, history } = await killHolder(
      {},
      `
name: long
task_queue: q
retry: { initial_backoff_ms: 10 }
steps:
  - { id: hold, call: { action: holdUntil, input: "{ 'file': input.file }", heartbeat_ms: 2000 } }
`,
    );
    assert.equal(status, "Completed");
    // A machine that stalls the first worker past the allowance before the kill adds a
    // timed-out attempt (held by that worker too); the run still completes on the second.
    const timedOut = timeouts(history);
    assert.ok(timedOut.length >= 1, "the killed worker's attempt timed out");
    assert.deepEqual(
      timedOut,
      timedOut.map((_, i) => [1, i + 1, "heartbeat"]),
    );
    assert.deepEqual(completions(history), [[1, timedOut.length + 1]]);
  });

  test("a lost attempt (worker killed, no heartbeat timeout) is retried after the re-attach grace", async () => {
    const { status, history } = await killHolder(
      { reattachGraceMs: 200 },
      "name: lost\ntask_queue: q\nretry: { initial_backoff_ms: 10 }\nsteps: [{id: h, call: {action: stallFirst, input: \"{'n': 1}\"}}]",
    );
    assert.equal(status, "Completed");
    assert.deepEqual(timeouts(history), [[1, 1, "worker_lost"]]);
    assert.deepEqual(completions(history), [[1, 2]]);
  });

  test("a cancelled run stops its running attempt", async () => {
    const t = await setup();
    const w = t.worker();
    try {
      await sessions(t.endpoint, 1);
      const def = parseDefinition(
        "name: c\ntask_queue: q\nsteps: [{id: h, call: {action: hold, input: \"{'ms': 60000}\"}}]",
        "yaml",
      );
      const { runId, done } = await t.run(def, {});
      await holding(t, runId);
      await t.engine.cancel(runId);
      assert.equal((await done).status, "Cancelled");
      await until("the worker to give the slot back", () =>
        t.endpoint.matcher.stats().holding === 0 ? true : undefined,
      );
      assert.deepEqual(
        (await t.store.history(runId)).map((e) => e.type),
        ["RunStarted", "ActivityScheduled", "RunCancelled"],
      );
    } finally {
      w.kill();
      await w.exited;
      await t.close();
    }
  });
});

describe("runs the engine cannot advance are quarantined, the others go on", () => {
  test("a corrupt history and a definition that is not the pinned one", async () => {
    const dir = await tempDir();
    const store = openRuns(dir);
    const def = parseDefinition(
      "name: d\ntask_queue: q\nsteps: [{id: a, call: {action: inc}}]",
      "yaml",
    );
    const other = parseDefinition(
      "name: e\ntask_queue: q\nsteps: [{id: a, call: {action: inc}}]",
      "yaml",
    );
    const identity = (runId: string, version: string) => ({
      runId,
      workflowId: runId,
      namespace: "default",
      definitionVersion: version,
      status: "Running" as const,
    });
    const startedAt = (version: string): HistoryEvent => ({
      type: "RunStarted",
      at: 1,
      workflow_id: "w",
      definition_version: version,
      input_json: "{}",
    });
    await store.commit([
      { ...identity("good", def.version), events: [startedAt(def.version)] },
      // A result for an activity that was never scheduled.
      {
        ...identity("corrupt", def.version),
        events: [
          startedAt(def.version),
          { type: "ActivityCompleted", at: 2, activity_id: 1, attempt: 1, output_json: "{}" },
        ],
      },
      // Recorded as pinning `other`, but the lookup returns `def`.
      { ...identity("mismatch", other.version), events: [startedAt(other.version)] },
    ]);
    const errors = new Map<string, string>();
    const engine = new Engine({
      store,
      definitions: async () => def,
      onRunError: (runId, error) => errors.set(runId, (error as { code: string }).code),
    });
    const endpoint = await startWorkerEndpoint("127.0.0.1:0", {
      verify: async () => ({ subject: "t", worker: true, namespaces: "*" }),
      namespaceGate: async () => true,
      events: engine.matcherEvents,
    });
    engine.attach(endpoint.matcher);
    try {
      assert.equal(await engine.recover(), 3);
      await engine.idle();
      assert.deepEqual([...errors].sort(), [
        ["corrupt", "history_corrupt"],
        ["mismatch", "definition_mismatch"],
      ]);
      assert.equal(engine.running, 1);
      assert.equal(engine.state("good")?.activities.size, 1, "the good run scheduled its activity");
      assert.equal(endpoint.matcher.stats().waiting, 1, "and offered it");
    } finally {
      engine.close();
      await endpoint.close();
    }
  });
});

describe("results that arrive while runs are being recovered", () => {
  test("wait for the runs to load, then are recorded", async () => {
    const dir = await tempDir();
    const def = parseDefinition(
      "name: d\ntask_queue: q\nsteps: [{id: a, call: {action: inc}}]",
      "yaml",
    );
    const store = openRuns(dir);
    await store.commit([
      {
        runId: "r1",
        workflowId: "r1",
        namespace: "default",
        definitionVersion: def.version,
        status: "Running",
        events: [
          {
            type: "RunStarted",
            at: 1,
            workflow_id: "r1",
            definition_version: def.version,
            input_json: "{}",
          },
          {
            type: "ActivityScheduled",
            at: 1,
            activity_id: 1,
            attempt: 1,
            step_id: "a",
            action: "inc",
            task_queue: "q",
            input_json: "{}",
            dispatch_at: 1,
            start_to_close_ms: 60_000,
            heartbeat_ms: 0,
          },
        ],
      },
    ]);
    // Fault injection around the real store: loading waits until the test lets it go.
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = {
      commit: (batch: Parameters<typeof store.commit>[0]) => store.commit(batch),
      loadRunning: async () => {
        await gate;
        return store.loadRunning();
      },
      loadOutbox: () => store.loadOutbox(),
    };
    let onEnded: (state: RunState) => void = () => {};
    const ended = new Promise<RunState>((resolve) => {
      onEnded = resolve;
    });
    const engine = new Engine({
      store: slow,
      definitions: async () => def,
      onRunEnded: (_, s) => onEnded(s),
    });
    const endpoint = await startWorkerEndpoint("127.0.0.1:0", {
      verify: async () => ({ subject: "t", worker: true, namespaces: "*" }),
      namespaceGate: async () => true,
      events: engine.matcherEvents,
    });
    engine.attach(endpoint.matcher);
    try {
      const recovered = engine.recover();
      const ctx = { namespace: "default", taskQueue: "q", workerName: "w", sessionId: "s" };
      let answered = false;
      const ack = answerOf((receipt) =>
        engine.matcherEvents.completed(
          { run_id: "r1", activity_id: 1, attempt: 1 },
          '{"n":1}',
          ctx,
          {
            recorded: () => {
              answered = true;
              receipt.recorded();
            },
            refused: receipt.refused,
          },
        ),
      );
      assert.equal(answered, false, "the result is held, not dropped");
      release();
      assert.equal(await recovered, 1);
      await ack;
      assert.equal((await ended).status, "Completed");
      assert.deepEqual(completions(await store.history("r1")), [[1, 1]]);
    } finally {
      engine.close();
      await endpoint.close();
    }
  });
});

describe("a commit that fails", () => {
  test("stops the engine, refuses the inputs it held, and calls onFatal", async () => {
    const dir = await tempDir();
    const store = openRuns(dir);
    // Fault injection around the real store: every commit fails.
    const failing = {
      commit: async () => {
        throw new Error("disk full");
      },
      loadRunning: () => store.loadRunning(),
      loadOutbox: () => store.loadOutbox(),
    };
    let fatal: unknown;
    const engine = new Engine({
      store: failing,
      definitions: async () => assert.fail("no recovery"),
      onFatal: (error) => {
        fatal = error;
      },
    });
    const def = parseDefinition(
      "name: d\ntask_queue: q\nsteps: [{id: a, sleep: {duration_ms: 10}}]",
      "yaml",
    );
    await assert.rejects(
      engine.start({
        runId: randomUUID(),
        workflowId: "w",
        namespace: "default",
        definition: def,
        inputJson: "{}",
      }),
      /disk full/,
    );
    assert.match(String(fatal), /disk full/);
    await assert.rejects(
      engine.start({
        runId: randomUUID(),
        workflowId: "w2",
        namespace: "default",
        definition: def,
        inputJson: "{}",
      }),
      { code: "engine_stopped" },
    );
    assert.deepEqual(await store.loadRunning(), [], "nothing reached the store");
  });
});
