// Each builtin worker kind, end to end: a real gRPC endpoint (the matcher) dispatches to a
// real `skein worker` process, which runs the action and reports back.

import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { WorkerEndpoint } from "../../src/workflow/rpc/server.ts";
import { until } from "../support/until.ts";
import {
  ACTIVITIES,
  offer,
  type Recorder,
  type Result,
  sessions,
  spawnWorker,
  startEndpoint,
  tempDir,
  tokenFile,
  type WorkerProcess,
  writeJson,
} from "../support/worker-endpoint.ts";

function completed(r: Result): string {
  assert.equal(r.type, "completed", JSON.stringify(r));
  return r.type === "completed" ? r.output : "";
}

function failed(r: Result) {
  assert.equal(r.type, "failed", JSON.stringify(r));
  return r.type === "failed" ? r.failure : assert.fail();
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("builtin worker kinds (real gRPC endpoint, real worker processes)", () => {
  let endpoint: WorkerEndpoint;
  let recorder: Recorder;
  let address: string;
  let dir: string;
  let token: string;
  let http: Server;
  let httpBase: string;
  const workers: WorkerProcess[] = [];

  before(async () => {
    ({ endpoint, recorder, address } = await startEndpoint());
    dir = await tempDir();
    token = await tokenFile(dir, "worker-all");
    http = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://x");
        if (url.pathname.startsWith("/echo/")) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              id: url.pathname.slice(6),
              method: req.method,
              body: JSON.parse(body || "null"),
            }),
          );
        } else if (url.pathname === "/status/500") {
          res.writeHead(500);
          res.end("database on fire");
        } else if (url.pathname === "/status/404") {
          res.writeHead(404);
          res.end("no such widget");
        } else if (url.pathname === "/hang") {
          // Never answers: only a cancel ends this request.
        } else {
          res.writeHead(200);
          res.end("not json");
        }
      });
    });
    await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
    const a = http.address();
    httpBase = `http://127.0.0.1:${typeof a === "object" && a !== null ? a.port : 0}`;

    const node = process.execPath;
    await writeFile(
      join(dir, "double.mjs"),
      "let t='';process.stdin.on('data',c=>t+=c).on('end',()=>{const v=JSON.parse(t);process.stdout.write(JSON.stringify({doubled:v.n*2, big: 18446744073709551615}).replace('1844674407370955','18446744073709551615').replace(/18446744073709551615\\d+/,'18446744073709551615'))})",
    );
    await writeFile(
      join(dir, "fail.mjs"),
      "process.stderr.write('x'.repeat(10000)+'\\nthe widget is broken\\n');process.exit(3)",
    );
    await writeFile(join(dir, "garbage.mjs"), "process.stdout.write('this is not json')");
    await writeFile(
      join(dir, "sleepy.mjs"),
      `import {spawn} from 'node:child_process';import {writeFileSync} from 'node:fs';
       const c = spawn(${JSON.stringify(node)}, ['-e','setTimeout(()=>{},60000)'], {stdio:'ignore'});
       writeFileSync(process.argv[2], String(c.pid)); setTimeout(()=>{},60000);`,
    );
    const execDoc = await writeJson(dir, "exec.json", {
      name: "exec-worker",
      task_queue: "q",
      actions: {
        double: { command: [node, "double.mjs"] },
        broken: { command: [node, "fail.mjs"] },
        garbage: { command: [node, "garbage.mjs"] },
        sleepy: {
          command: [node, "sleepy.mjs", join(dir, "grandchild.pid")],
          cancel_grace_ms: 200,
        },
      },
    });
    const moduleDoc = await writeJson(dir, "module.json", {
      name: "module-worker",
      task_queue: "q",
      actions: {
        add: { module: ACTIVITIES, export: "add" },
        fail: { module: ACTIVITIES, export: "fail" },
        hold: { module: ACTIVITIES, export: "hold" },
      },
    });
    const httpDoc = await writeJson(dir, "http.json", {
      name: "http-worker",
      task_queue: "q",
      actions: {
        echo: { url: `${httpBase}/echo/{id}`, method: "PUT", headers: { "x-test": "1" } },
        server_error: { url: `${httpBase}/status/500` },
        not_found: { url: `${httpBase}/status/404`, method: "GET" },
        not_json: { url: `${httpBase}/plain`, method: "GET" },
        hang: { url: `${httpBase}/hang` },
      },
    });
    for (const [kind, doc] of [
      ["exec", execDoc],
      ["module", moduleDoc],
      ["http", httpDoc],
    ] as const) {
      workers.push(
        spawnWorker([
          kind,
          doc,
          "--endpoint",
          `http://${address}`,
          "--token-file",
          token,
          "--concurrency",
          "4",
        ]),
      );
    }
    await sessions(endpoint, 3);
  });

  after(async () => {
    for (const w of workers) w.kill();
    assert.deepEqual(await Promise.all(workers.map((w) => w.exited)), [0, 0, 0]);
    await endpoint.close();
    http.close();
  });

  test("module: the exported function's result is the output", async () => {
    const task = offer("add", { a: 2, b: 40 });
    endpoint.matcher.offer(task);
    assert.deepEqual(JSON.parse(completed(await recorder.waitResult(task.ref))), { sum: 42 });
  });

  test("module: a thrown error keeps its code and message", async () => {
    const task = offer("fail", { message: "the widget is broken" });
    endpoint.matcher.offer(task);
    const f = failed(await recorder.waitResult(task.ref));
    assert.deepEqual(f, {
      code: "widget_broken",
      message: "the widget is broken",
      nonRetryable: false,
    });
  });

  test("exec: input on stdin, output from stdout, numbers kept exactly", async () => {
    const task = offer("double", { n: 21 });
    endpoint.matcher.offer(task);
    const out = completed(await recorder.waitResult(task.ref));
    assert.match(out, /"doubled":42/);
    assert.match(out, /18446744073709551615/);
  });

  test("exec: a non-zero exit fails with the stderr tail", async () => {
    const task = offer("broken", {});
    endpoint.matcher.offer(task);
    const f = failed(await recorder.waitResult(task.ref));
    assert.equal(f.code, "exit_status");
    assert.equal(f.nonRetryable, false);
    assert.match(f.message, /exited with status 3; stderr: …x+\nthe widget is broken$/);
    assert.ok(f.message.length < 5000, "only the tail of stderr is kept");
  });

  test("exec: stdout that is not JSON fails as bad_output", async () => {
    const task = offer("garbage", {});
    endpoint.matcher.offer(task);
    assert.equal(failed(await recorder.waitResult(task.ref)).code, "bad_output");
  });

  test("http: URL template, method, body and JSON response", async () => {
    const task = offer("echo", { id: "w 1", size: 3 });
    endpoint.matcher.offer(task);
    assert.deepEqual(JSON.parse(completed(await recorder.waitResult(task.ref))), {
      id: "w%201",
      method: "PUT",
      body: { id: "w 1", size: 3 },
    });
  });

  const httpFailures: [action: string, code: string, nonRetryable: boolean, message: RegExp][] = [
    ["server_error", "http_status", false, /answered 500: database on fire/],
    ["not_found", "http_status", true, /answered 404: no such widget/],
    ["not_json", "bad_output", false, /response body is not one JSON value/],
  ];
  for (const [action, code, nonRetryable, message] of httpFailures) {
    test(`http: ${action} fails as ${code} (non-retryable: ${nonRetryable})`, async () => {
      const task = offer(action, {});
      endpoint.matcher.offer(task);
      const f = failed(await recorder.waitResult(task.ref));
      assert.equal(f.code, code);
      assert.equal(f.nonRetryable, nonRetryable);
      assert.match(f.message, message);
    });
  }

  test("the worker aborts an attempt that outlives its start-to-close timeout", async () => {
    const task = offer("hold", { ms: 60_000 }, { startToCloseMs: 50 });
    endpoint.matcher.offer(task);
    const f = failed(await recorder.waitResult(task.ref));
    assert.equal(f.code, "start_to_close_timeout");
    assert.equal(f.nonRetryable, false);
  });

  test("an action the worker does not serve is never dispatched to it", async () => {
    const task = offer("nobody-serves-this", {});
    assert.equal(endpoint.matcher.offer(task), "queued");
    assert.equal(endpoint.matcher.cancel(task.ref, "test over"), "withdrawn");
  });

  const cancels: [kind: string, action: string][] = [
    ["module", "hold"],
    ["exec", "sleepy"],
    ["http", "hang"],
  ];
  for (const [kind, action] of cancels) {
    test(`cancel-activity frame aborts a running ${kind} attempt`, async () => {
      const task = offer(action, { ms: 60_000 });
      endpoint.matcher.offer(task);
      await recorder.until(
        () => endpoint.matcher.liveAttempts(task.ref.run_id).length === 1,
        "the attempt to be live",
      );
      const [live] = endpoint.matcher.liveAttempts(task.ref.run_id);
      assert.deepEqual(live!.capabilities, ["Cancel"]);
      if (kind === "exec") {
        // Wait until the command has started its own child, then cancel the group.
        const pidFile = join(dir, "grandchild.pid");
        await until(
          "the command's child to start",
          async () => (await readFile(pidFile, "utf8").catch(() => "")) !== "",
        );
      }
      assert.equal(endpoint.matcher.cancel(task.ref, "operator said stop"), "signalled");
      const f = failed(await recorder.waitResult(task.ref));
      assert.equal(f.code, "cancelled");
      assert.equal(f.message, "operator said stop");
      if (kind === "exec") {
        const pid = Number(await readFile(join(dir, "grandchild.pid"), "utf8"));
        await until("the command's process group to exit", () => !processAlive(pid));
        assert.equal(processAlive(pid), false, "the command's whole process group is gone");
      }
    });
  }
});
