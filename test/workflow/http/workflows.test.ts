// Black-box tests of the workflow endpoints: the real `skein serve` (SQLite) and real
// `skein worker` processes, over HTTP and gRPC. Nothing here stands in for a server part.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { until } from "../../support/until.ts";
import { ACTIVITIES, freePort, spawnWorker, writeJson } from "../../support/worker-endpoint.ts";
import {
  adminToken,
  call,
  type ServerProcess,
  skein,
  startServe,
  tempDir,
  tokenFor,
  writeConfig,
} from "../support/server.ts";

const CHAIN = `
name: chain
task_queue: q
retry: { max_attempts: 3, initial_backoff_ms: 20 }
steps:
  - { id: a, call: { action: inc, input: "{ 'n': input.n }" } }
  - { id: b, call: { action: flaky, input: "{ 'n': steps.a.n }" } }
  - { id: c, call: { action: inc, input: "{ 'n': steps.b.n }" } }
output: "{ 'result': steps.c.n, 'first': steps.a.n }"
`;

async function workerDoc(dir: string): Promise<string> {
  return writeJson(dir, "worker.json", {
    name: "w",
    task_queue: "q",
    actions: Object.fromEntries(
      ["inc", "flaky", "hold", "holdUntil", "stallFirst"].map((name) => [
        name,
        { module: ACTIVITIES, export: name },
      ]),
    ),
  });
}

async function worker(dir: string, server: ServerProcess, token: string, namespace = "default") {
  return spawnWorker([
    "module",
    await workerDoc(dir),
    "--endpoint",
    server.grpc!,
    "--namespace",
    namespace,
    "--reconnect-initial-backoff",
    "0.05",
    "--reconnect-max-backoff",
    "0.2",
    "--token-file",
    await secret(dir, token),
  ]);
}

async function secret(dir: string, token: string): Promise<string> {
  const path = join(dir, "worker.token");
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  return path;
}

/** A config with the default namespace `default` and `extra` namespace settings. */
function config(dir: string, namespaces = ""): Promise<string> {
  return writeConfig(dir, `[namespaces]\ndefault = "default"\n${namespaces}`);
}

/** Polls describe until the run leaves Running. */
async function ended(server: ServerProcess, token: string, workflowId: string, ns = "default") {
  let last: unknown;
  return until(
    () => `run ${workflowId} to end: ${JSON.stringify(last)}`,
    async () => {
      const r = await call(server.url, "POST", "/workflows/describe", {
        token,
        body: { namespace: ns, workflow_id: workflowId },
      });
      last = r.body;
      return r.status === 200 && r.body.run.status !== "Running" ? r.body.run : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

async function history(server: ServerProcess, token: string, workflowId: string) {
  const r = await call(server.url, "POST", "/workflows/history", {
    token,
    body: { workflow_id: workflowId },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.next, null, "a short history fits in one answer");
  // biome-ignore lint/suspicious/noExplicitAny: events are tagged JSON objects
  return r.body.events as any[];
}

/** Reads the history 3 events a page, following `next`, and checks it against `all`. */
async function pagesMatch(
  server: ServerProcess,
  token: string,
  workflowId: string,
  all: readonly unknown[],
): Promise<void> {
  const read: unknown[] = [];
  let after: number | null = 0;
  let pages = 0;
  while (after !== null) {
    const r = await call(server.url, "POST", "/workflows/history", {
      token,
      body: { workflow_id: workflowId, after, limit: 3 },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.body.events.length <= 3);
    read.push(...r.body.events);
    after = r.body.next;
    pages++;
  }
  assert.deepEqual(read, all);
  assert.equal(pages, Math.ceil(all.length / 3));
  const past = await call(server.url, "POST", "/workflows/history", {
    token,
    body: { workflow_id: workflowId, after: all.length + 5 },
  });
  assert.deepEqual([past.body.events, past.body.next], [[], null]);
  for (const body of [{ limit: 0 }, { limit: 10_001 }, { after: -1 }, { after: "1" }]) {
    const r = await call(server.url, "POST", "/workflows/history", {
      token,
      body: { workflow_id: workflowId, ...body },
    });
    assert.deepEqual([r.status, r.body.error.code], [400, "decode_refused"], JSON.stringify(body));
  }
}

const completions = (events: { type: string; activity_id: number; attempt: number }[]) =>
  events.filter((e) => e.type === "ActivityCompleted").map((e) => [e.activity_id, e.attempt]);

describe("workflows through the real server and real workers", () => {
  test("register, start, outputs flow between steps, a failing attempt is retried; CLI reads", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const server = await startServe(await config(dir.path));
    const token = await adminToken(dir.path);
    const w = await worker(dir.path, server, token);
    try {
      const defFile = join(dir.path, "chain.yaml");
      await writeFile(defFile, CHAIN);
      const env = { SKEIN_SERVER: server.url, SKEIN_TOKEN: token };
      const reg = skein(["workflow", "register", defFile, "-o", "text"], env);
      assert.equal(reg.status, 0, reg.stderr);
      assert.match(reg.stdout, /^chain sha256:[0-9a-f]{64}\n$/);
      const again = skein(["workflow", "register", defFile, "-o", "text"], env);
      assert.match(again.stdout, /already registered/);

      const started = skein(["workflow", "start", "chain", "--input", '{"n":1}'], env);
      assert.equal(started.status, 0, started.stderr);
      const { workflow_id, run_id, created } = JSON.parse(started.stdout);
      assert.match(workflow_id, /^[0-9a-f-]{36}$/);
      assert.match(run_id, /^[0-9a-f-]{36}$/);
      assert.equal(created, true);

      const run = await ended(server, token, workflow_id);
      assert.equal(run.status, "Completed");
      assert.deepEqual(run.output, { result: 5, first: 2 });
      assert.equal(run.run_id, run_id);
      const events = await history(server, token, workflow_id);
      assert.equal(events[0].type, "RunStarted");
      assert.deepEqual(events[0].input, { n: 1 });
      assert.deepEqual(completions(events), [
        [1, 1],
        [2, 2],
        [3, 1],
      ]);
      const failed = events.filter((e) => e.type === "ActivityFailed");
      assert.deepEqual(
        failed.map((e) => [e.activity_id, e.attempt, e.code]),
        [[2, 1, "flaky"]],
      );
      assert.equal(events.at(-1).type, "RunCompleted");
      await pagesMatch(server, token, workflow_id, events);

      const described = skein(["workflow", "describe", workflow_id], env);
      assert.equal(JSON.parse(described.stdout).status, "Completed");
      const lines = skein(["workflow", "history", workflow_id], env).stdout.trim().split("\n");
      assert.equal(lines.length, events.length);
      // A small page size makes the CLI follow `next` through several pages.
      const paged = skein(["workflow", "history", workflow_id, "--limit", "2"], env);
      assert.equal(paged.status, 0, paged.stderr);
      assert.deepEqual(paged.stdout.trim().split("\n"), lines);
      const listed = skein(["workflow", "list", "--status", "Completed"], env);
      assert.deepEqual(
        listed.stdout
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l).workflow_id),
        [workflow_id],
      );
    } finally {
      w.kill();
      await w.exited;
      await server.stop();
    }
  });

  test("start is idempotent on a client workflow_id; list pages; refusals", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const server = await startServe(await config(dir.path));
    const token = await adminToken(dir.path);
    try {
      const reg = await call(server.url, "POST", "/workflows/definitions", {
        token,
        body: { definition: CHAIN },
      });
      assert.equal(reg.status, 200, JSON.stringify(reg.body));
      assert.deepEqual(
        [reg.body.namespace, reg.body.name, reg.body.created],
        ["default", "chain", true],
      );
      const workflowId = "5b0e7c1e-8f5a-4c61-9f3e-2a7d8b9c0d1e";
      const body = { name: "chain", input: { n: 1 }, workflow_id: workflowId };
      const [a, b] = await Promise.all([
        call(server.url, "POST", "/workflows/start", { token, body }),
        call(server.url, "POST", "/workflows/start", { token, body }),
      ]);
      assert.equal(a.status, 200);
      assert.equal(a.body.run_id, b.body.run_id);
      assert.deepEqual([a.body.created, b.body.created].sort(), [false, true]);
      const c = await call(server.url, "POST", "/workflows/start", { token, body });
      assert.deepEqual([c.body.run_id, c.body.created], [a.body.run_id, false]);

      for (let i = 0; i < 4; i++) {
        await call(server.url, "POST", "/workflows/start", { token, body: { name: "chain" } });
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await call(server.url, "POST", "/workflows/list", {
          token,
          body: { limit: 2, status: "Running", ...(cursor === undefined ? {} : { cursor }) },
        });
        assert.equal(page.status, 200);
        seen.push(...page.body.runs.map((r: { run_id: string }) => r.run_id));
        cursor = page.body.next_cursor ?? undefined;
      } while (cursor !== undefined);
      assert.equal(new Set(seen).size, 5);
      // The CLI lists newest first on --order newest; its cursor (on stderr) keeps the order.
      const newest = await call(server.url, "POST", "/workflows/list", {
        token,
        body: { order: "newest" },
      });
      const env = { SKEIN_SERVER: server.url, SKEIN_TOKEN: token };
      const ids = (stdout: string) =>
        stdout
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l).run_id);
      const head = skein(["workflow", "list", "--order", "newest", "--limit", "2"], env);
      assert.equal(head.status, 0, head.stderr);
      const cursorLine = /next cursor: (\S+)/.exec(head.stderr);
      assert.ok(cursorLine, head.stderr);
      const tail = skein(["workflow", "list", "--cursor", cursorLine[1]!], env);
      assert.equal(tail.status, 0, tail.stderr);
      assert.deepEqual(
        [...ids(head.stdout), ...ids(tail.stdout)],
        newest.body.runs.map((r: { run_id: string }) => r.run_id),
      );
      const sideways = skein(["workflow", "list", "--order", "sideways"], env);
      assert.notEqual(sideways.status, 0);
      assert.match(sideways.stderr, /--order must be oldest or newest/);

      const refusals: [label: string, path: string, body: object, status: number, code: string][] =
        [
          [
            "duplicate step id",
            "/workflows/definitions",
            {
              definition:
                "name: d\ntask_queue: q\nsteps: [{id: a, call: {action: x}}, {id: a, call: {action: y}}]",
            },
            400,
            "invalid_definition",
          ],
          [
            "bad JSONata expression",
            "/workflows/definitions",
            {
              definition: "name: d\ntask_queue: q\nsteps: [{id: a, call: {action: x, input: '{'}}]",
            },
            400,
            "invalid_definition",
          ],
          ["unknown definition", "/workflows/start", { name: "nope" }, 404, "definition_not_found"],
          [
            "workflow_id not a UUID",
            "/workflows/start",
            { name: "chain", workflow_id: "x" },
            400,
            "decode_refused",
          ],
          [
            "absent run",
            "/workflows/describe",
            { workflow_id: "00000000-0000-4000-8000-000000000000" },
            404,
            "run_not_found",
          ],
          ["bad cursor", "/workflows/list", { cursor: "zz" }, 400, "invalid_cursor"],
          ["unknown order", "/workflows/list", { order: "latest" }, 400, "decode_refused"],
          ["limit over 1000", "/workflows/list", { limit: 1001 }, 400, "decode_refused"],
        ];
      for (const [label, path, refused, status, code] of refusals) {
        const r = await call(server.url, "POST", path, { token, body: refused });
        assert.equal(r.status, status, `${label}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, code, label);
      }
      const dup = await call(server.url, "POST", "/workflows/definitions", {
        token,
        body: refusals[0]![2],
      });
      assert.match(dup.body.error.message, /steps\[1\]/, "the refusal points at the step");
    } finally {
      await server.stop();
    }
  });

  test("401 without a bearer, 403 outside the bearer's namespaces, on every endpoint", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const server = await startServe(await config(dir.path));
    const other = await tokenFor(dir.path, { namespaces: ["other"] });
    try {
      const bodies: [string, object][] = [
        ["/workflows/definitions", { definition: CHAIN }],
        ["/workflows/start", { name: "chain" }],
        ["/workflows/describe", { workflow_id: "00000000-0000-4000-8000-000000000000" }],
        ["/workflows/list", {}],
        ["/workflows/history", { workflow_id: "00000000-0000-4000-8000-000000000000" }],
      ];
      for (const [path, body] of bodies) {
        const none = await call(server.url, "POST", path, { body });
        assert.equal(none.status, 401, path);
        const denied = await call(server.url, "POST", path, { token: other, body });
        assert.equal(denied.status, 403, path);
        assert.equal(denied.body.error.code, "forbidden");
      }
    } finally {
      await server.stop();
    }
  });

  for (const autoCreate of ["open", "closed"] as const) {
    test(`auto_create ${autoCreate}: starting in and serving an absent namespace`, async (t) => {
      const dir = await tempDir();
      t.after(dir.remove);
      const server = await startServe(await config(dir.path, `auto_create = "${autoCreate}"`));
      const token = await adminToken(dir.path);
      const w = await worker(dir.path, server, token, "fresh");
      try {
        const reg = await call(server.url, "POST", "/workflows/definitions", {
          token,
          body: { namespace: "fresh", definition: CHAIN },
        });
        if (autoCreate === "closed") {
          assert.equal(reg.status, 404);
          assert.equal(reg.body.error.code, "namespace_not_found");
          const start = await call(server.url, "POST", "/workflows/start", {
            token,
            body: { namespace: "fresh", name: "chain" },
          });
          assert.equal(start.body.error.code, "namespace_not_found");
          // The worker serving the absent namespace is refused and gives up.
          assert.notEqual(await w.exited, 0);
          assert.match(w.stderr(), /namespace_not_found|does not exist/);
          return;
        }
        assert.equal(reg.status, 200, JSON.stringify(reg.body));
        const start = await call(server.url, "POST", "/workflows/start", {
          token,
          body: { namespace: "fresh", name: "chain", input: { n: 10 } },
        });
        const run = await ended(server, token, start.body.workflow_id, "fresh");
        assert.deepEqual(run.output, { result: 23, first: 11 });
        const list = await call(server.url, "GET", "/namespaces", { token });
        assert.ok(list.body.namespaces.some((n: { name: string }) => n.name === "fresh"));
      } finally {
        w.kill();
        await w.exited;
        await server.stop();
      }
    });
  }

  test("a heartbeat timeout after SIGKILL of the worker is retried on another worker", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const server = await startServe(await config(dir.path));
    const token = await adminToken(dir.path);
    const first = await worker(dir.path, server, token);
    let second: Awaited<ReturnType<typeof worker>> | undefined;
    const definition = `
name: stall
task_queue: q
retry: { initial_backoff_ms: 10 }
steps:
  - { id: s, call: { action: holdUntil, input: "{ 'file': input.file }", heartbeat_ms: 1000 } }
`;
    // Every attempt the first worker takes holds until the file exists, which it does only
    // once that worker is killed: a machine that stalls the worker past the allowance before
    // the kill adds a timed-out attempt, it does not change where the run completes.
    const release = join(dir.path, "release");
    try {
      await call(server.url, "POST", "/workflows/definitions", { token, body: { definition } });
      await call(server.url, "POST", "/workflows/definitions", {
        token,
        body: { definition: CHAIN },
      });
      // A first run through proves the first worker is attached before the stalling one.
      const warm = await call(server.url, "POST", "/workflows/start", {
        token,
        body: { name: "chain", input: { n: 0 } },
      });
      assert.equal((await ended(server, token, warm.body.workflow_id)).status, "Completed");
      const start = await call(server.url, "POST", "/workflows/start", {
        token,
        body: { name: "stall", input: { file: release } },
      });
      // The first attempt was offered to the only worker when the start became durable;
      // the worker's own heartbeats keep it alive until it is killed.
      await until("the first attempt to be held by the worker", async () => {
        const r = await call(server.url, "POST", "/workflows/describe", {
          token,
          body: { workflow_id: start.body.workflow_id },
        });
        return r.body.pending_activities?.[0]?.state === "running";
      });
      first.kill("SIGKILL");
      await first.exited;
      await writeFile(release, "");
      second = await worker(dir.path, server, token);
      const run = await ended(server, token, start.body.workflow_id);
      assert.equal(run.status, "Completed");
      assert.deepEqual(run.output, { released: true });
      const events = await history(server, token, start.body.workflow_id);
      const timedOut = events
        .filter((e) => e.type === "ActivityTimedOut")
        .map((e) => [e.activity_id, e.attempt, e.timeout]);
      assert.ok(timedOut.length >= 1, "the killed worker's attempt timed out");
      assert.deepEqual(
        timedOut,
        timedOut.map((_, i) => [1, i + 1, "heartbeat"]),
      );
      assert.deepEqual(completions(events), [[1, timedOut.length + 1]]);
    } finally {
      first.kill("SIGKILL");
      second?.kill();
      await second?.exited;
      await server.stop();
    }
  });

  test("server killed with SIGKILL mid-run: after a restart the run completes, each activity completed once", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const configFile = await config(dir.path);
    const grpc = ["--grpc-listen", `127.0.0.1:${await freePort()}`];
    const first = await startServe(configFile, grpc);
    const token = await adminToken(dir.path);
    const w = await worker(dir.path, first, token);
    const steps = Array.from(
      { length: 6 },
      (_, i) => `  - { id: s${i}, call: { action: hold, input: "{ 'ms': 120 }" } }`,
    );
    const definition = `name: six\ntask_queue: q\nsteps:\n${steps.join("\n")}\n`;
    let second: ServerProcess | undefined;
    try {
      await call(first.url, "POST", "/workflows/definitions", { token, body: { definition } });
      const start = await call(first.url, "POST", "/workflows/start", {
        token,
        body: { name: "six" },
      });
      const workflowId = start.body.workflow_id;
      await until(
        () => `two completions: ${w.stderr()}`,
        async () => completions(await history(first, token, workflowId)).length >= 2,
      );
      await first.stop("SIGKILL");
      second = await startServe(configFile, grpc);
      const run = await ended(second, token, workflowId);
      assert.equal(run.status, "Completed");
      const events = await history(second, token, workflowId);
      assert.deepEqual(
        completions(events).map(([id]) => id),
        [1, 2, 3, 4, 5, 6],
        "each activity completed exactly once, in order",
      );
      assert.equal(events.at(-1).type, "RunCompleted");
    } finally {
      await first.stop("SIGKILL");
      w.kill();
      await w.exited;
      await second?.stop();
    }
  });
});
