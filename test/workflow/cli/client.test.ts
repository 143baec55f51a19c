// The `skein` client commands as a person and a script use them, against a real server and
// real worker processes: -o text|json (JSON when piped, text on a terminal), short flags,
// SKEIN_NAMESPACE, --input-file and stdin, workers reading SKEIN_TOKEN, the new reads
// (workflow definitions, task-queue describe, namespace describe|delete, describe's pending
// activities), `skein version`, shell completion, and refusals with hints that name CLI
// commands, never HTTP routes.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { VERSION } from "../../../src/common/version.ts";
import {
  ACTIVITIES,
  spawnWorker,
  type WorkerProcess,
  writeJson,
} from "../../support/worker-endpoint.ts";
import {
  adminToken,
  type ServerProcess,
  SKEIN_BIN,
  skein,
  startServe,
  tempDir,
  writeConfig,
} from "../support/server.ts";

const DEFINITION =
  "name: echo\ntask_queue: q\nsteps:\n  - { id: a, call: { action: noop, input: 'input' } }\noutput: steps.a\n";
const STUCK = "name: stuck\ntask_queue: empty\nsteps:\n  - { id: a, call: { action: noop } }\n";

let dir: Awaited<ReturnType<typeof tempDir>>;
let server: ServerProcess;
let admin: string;
let env: Record<string, string>;
let worker: WorkerProcess | undefined;

before(async () => {
  dir = await tempDir();
  server = await startServe(
    await writeConfig(dir.path, '[namespaces]\ndefault = "default"\nauto_create = "closed"'),
  );
  admin = await adminToken(dir.path);
  env = { SKEIN_SERVER: server.url, SKEIN_TOKEN: admin, SKEIN_NAMESPACE: "" };
  await writeFile(join(dir.path, "echo.yaml"), DEFINITION);
  await writeFile(join(dir.path, "stuck.yaml"), STUCK);
});
after(async () => {
  worker?.kill();
  await server?.stop();
  await dir?.remove();
});

const run = (args: string[], extra: Record<string, string> = {}, input?: string) =>
  spawnSync(process.execPath, [SKEIN_BIN, ...args], {
    encoding: "utf8",
    env: { ...process.env, SKEIN_LOG_LEVEL: "warn", ...env, ...extra },
    ...(input === undefined ? {} : { input }),
  });

function ok(r: ReturnType<typeof run>): string {
  assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

describe("output: JSON when piped, text with -o text, on a terminal by default", () => {
  test("register prints JSON when piped and NAME VERSION with -o text", () => {
    const piped = JSON.parse(ok(run(["workflow", "register", join(dir.path, "echo.yaml")])));
    assert.equal(piped.name, "echo");
    assert.match(piped.version, /^sha256:[0-9a-f]{64}$/);
    const text = ok(run(["workflow", "register", join(dir.path, "echo.yaml"), "-o", "text"]));
    assert.equal(text, `echo ${piped.version} (already registered)\n`);
  });

  test("on a terminal (a pseudo-terminal through script(1)) the default is text", () => {
    const command = [process.execPath, SKEIN_BIN, "namespace", "list", "--records"]
      .map((a) => `'${a}'`)
      .join(" ");
    const r = spawnSync("script", ["-qec", command, "/dev/null"], {
      encoding: "utf8",
      env: { ...process.env, ...env },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^NAME\s+CREATED\s+BY\s+MAX IN FLIGHT\s+CEILING IN FORCE\r?$/m);
    assert.match(r.stdout, /^default\s+\S+Z\s+skein\s+1024\s+false\r?$/m);
  });

  test("a bad --output is a usage error (exit 2)", () => {
    const r = run(["namespace", "list", "-o", "yaml"]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--output must be text or json/);
  });
});

describe("namespaces: SKEIN_NAMESPACE, describe and delete", () => {
  test("SKEIN_NAMESPACE picks the namespace; -n overrides it", () => {
    ok(run(["namespace", "create", "team"]));
    const reg = JSON.parse(
      ok(run(["workflow", "register", join(dir.path, "echo.yaml")], { SKEIN_NAMESPACE: "team" })),
    );
    assert.equal(reg.namespace, "team");
    const listed = ok(run(["workflow", "definitions"], { SKEIN_NAMESPACE: "team" }));
    assert.deepEqual(
      listed
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).name),
      ["echo"],
    );
    const other = ok(
      run(["workflow", "definitions", "-n", "default"], { SKEIN_NAMESPACE: "team" }),
    );
    assert.ok(other.includes('"name":"echo"'), "default has echo too (registered above)");
    const table = ok(run(["workflow", "definitions", "-n", "team", "-o", "text"]));
    assert.match(table, /^NAME\s+LATEST VERSION\s+VERSIONS\s+REGISTERED\s+BY$/m);
    assert.match(table, /^echo\s+sha256:[0-9a-f]{64}\s+1\s+\S+Z\s+admin$/m);
  });

  test("namespace describe and delete, in text and JSON", () => {
    ok(run(["namespace", "create", "scratch"]));
    const described = JSON.parse(ok(run(["namespace", "describe", "team"])));
    assert.deepEqual([described.name, described.definitions, described.runs], ["team", 1, {}]);
    const text = ok(run(["namespace", "describe", "team", "-o", "text"]));
    assert.match(text, /^definitions:\s+1$/m);
    assert.match(text, /^runs:\s+none$/m);
    assert.equal(
      ok(run(["namespace", "delete", "scratch", "-o", "text"])),
      "deleted namespace scratch (and 0 definition versions)\n",
    );
    const gone = run(["namespace", "describe", "scratch"]);
    assert.equal(gone.status, 1);
    assert.match(gone.stderr, /^skein: namespace_not_found: /);
    assert.match(gone.stderr, /^hint: create it with `skein namespace create NAME`/m);
  });
});

describe("inputs: --input-file, stdin, short flags", () => {
  test("-f FILE, -f - (stdin) and register - (stdin) with -s -t -n -o -w", async () => {
    worker = spawnWorker(
      [
        "module",
        await writeJson(dir.path, "worker.json", {
          name: "cli-worker",
          task_queue: "q",
          actions: { noop: { module: ACTIVITIES, export: "noop" } },
        }),
        "--endpoint",
        server.grpc!,
        "--namespace",
        "team",
      ],
      // No --token-file: the worker reads SKEIN_TOKEN.
      { SKEIN_TOKEN: admin },
    );
    const flags = ["-s", server.url, "-t", admin, "-n", "team", "-o", "json"];
    const bare = { SKEIN_SERVER: "", SKEIN_TOKEN: "" };
    await writeFile(join(dir.path, "input.json"), '{"n": 12345678901234567890}');
    const fromFileText = ok(
      run(
        ["workflow", "start", "echo", "-f", join(dir.path, "input.json"), "-w", "20000", ...flags],
        bare,
      ),
    );
    const fromFile = JSON.parse(fromFileText);
    assert.equal(fromFile.status, "Completed", fromFileText);
    // Numbers reach the run exactly as written in the file (its RunStarted input).
    const history = ok(run(["workflow", "history", fromFile.workflow_id, ...flags], bare));
    assert.ok(history.includes('"input":{"n":12345678901234567890}'), history);
    const fromStdin = run(
      ["workflow", "start", "echo", "-f", "-", "-w", "20000", ...flags],
      bare,
      '{"via":"stdin"}',
    );
    assert.deepEqual(JSON.parse(ok(fromStdin)).output, { via: "stdin" });
    const registered = run(["workflow", "register", "-", ...flags], bare, STUCK);
    assert.equal(JSON.parse(ok(registered)).name, "stuck");
    const both = run(["workflow", "start", "echo", "-i", "{}", "-f", "-", ...flags], bare);
    assert.equal(both.status, 2);
    const notJson = run(["workflow", "start", "echo", "-f", "-", ...flags], bare, "{nope");
    assert.equal(notJson.status, 2);
    assert.match(notJson.stderr, /--input-file - is not JSON/);
  });

  test("a stuck run: describe shows the waiting activity and a hint naming CLI commands", () => {
    const started = JSON.parse(ok(run(["workflow", "start", "stuck", "-n", "team"])));
    let text = "";
    for (let i = 0; i < 200 && !/waiting/.test(text); i++) {
      text = ok(run(["workflow", "describe", started.workflow_id, "-n", "team", "-o", "text"]));
    }
    assert.match(text, /^status:\s+Running$/m);
    assert.match(text, /^1\s+a\s+noop\s+empty\s+1\s+waiting\s+-\s+0\s+-$/m);
    assert.match(
      text,
      /^hint: no connected worker serves action noop on task queue empty; .*`skein task-queue describe empty --namespace team`$/m,
    );
    const json = JSON.parse(ok(run(["workflow", "describe", started.workflow_id, "-n", "team"])));
    assert.equal(json.status, "Running");
    assert.equal(json.pending_activities[0].state, "waiting");
  });

  test("task-queue describe lists the worker that connected with SKEIN_TOKEN", () => {
    const q = JSON.parse(ok(run(["task-queue", "describe", "q", "-n", "team"])));
    assert.deepEqual(
      q.workers.map((w: { name: string; kind: string }) => [w.name, w.kind]),
      [["cli-worker", "module"]],
    );
    const text = ok(run(["task-queue", "describe", "empty", "-n", "team", "-o", "text"]));
    assert.match(text, /^backlog:\s+1 \(noop 1\)$/m);
    assert.match(text, /^WORKER\s+KIND\s+BUSY\s+CONCURRENCY\s+DEPLOYMENT\s+ACTIONS\n\(none\)$/m);
  });
});

describe("refusals name CLI commands, never HTTP routes", () => {
  const rows: [
    name: string,
    args: string[],
    extra: Record<string, string>,
    code: RegExp,
    hint: RegExp,
  ][] = [
    [
      "absent namespace (auto_create closed)",
      ["workflow", "start", "x", "-n", "nowhere"],
      {},
      /namespace_not_found/,
      /skein namespace create NAME/,
    ],
    [
      "unknown definition",
      ["workflow", "start", "nope"],
      {},
      /definition_not_found/,
      /skein workflow register FILE.*skein workflow definitions/,
    ],
    [
      "bad bearer",
      ["namespace", "list", "-t", "nonsense"],
      {},
      /unauthenticated/,
      /skein token issue/,
    ],
    [
      "server down",
      ["namespace", "list", "-s", "http://127.0.0.1:1"],
      {},
      /server_unreachable|cannot reach/,
      /skein serve/,
    ],
  ];
  for (const [name, args, extra, code, hint] of rows) {
    test(name, () => {
      const r = run(args, extra);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, code);
      assert.match(r.stderr, hint);
      assert.doesNotMatch(r.stderr, /(GET|POST|PUT|DELETE) \//);
    });
  }
});

describe("skein version and completion", () => {
  test("version prints the client's and the server's versions", () => {
    const r = JSON.parse(ok(run(["version"])));
    assert.equal(r.client.version, VERSION);
    assert.equal(r.server.version, VERSION);
    assert.equal(r.server.node, process.versions.node);
    const text = ok(run(["version", "-o", "text"]));
    assert.match(text, new RegExp(`^client:\\s+${VERSION.replaceAll(".", "\\.")} \\(node `, "m"));
    const down = run(["version", "-s", "http://127.0.0.1:1", "-o", "text"]);
    assert.equal(down.status, 0);
    assert.match(down.stdout, /^server:\s+unknown: cannot reach http:\/\/127\.0\.0\.1:1/m);
  });

  test("bash completion completes commands, verbs and -o values in a real bash", () => {
    const script = ok(skein(["completion", "bash"]));
    const complete = (words: string[]) => {
      const r = spawnSync(
        "bash",
        [
          "-c",
          `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _skein; echo "\${COMPREPLY[*]}"`,
        ],
        { encoding: "utf8" },
      );
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.trim();
    };
    assert.equal(complete(["skein", "ta"]), "task-queue");
    assert.equal(complete(["skein", "namespace", "de"]), "describe delete");
    assert.equal(complete(["skein", "workflow", "def"]), "definitions");
    assert.equal(complete(["skein", "workflow", "list", "-o", ""]), "text json");
    assert.equal(complete(["skein", "completion", ""]), "bash zsh fish");
  });

  test("zsh and fish scripts cover every command", () => {
    const zsh = ok(skein(["completion", "zsh"]));
    assert.match(zsh, /^#compdef skein$/m);
    assert.match(zsh, /bashcompinit/);
    const fish = ok(skein(["completion", "fish"]));
    for (const command of [
      "serve",
      "workflow",
      "task-queue",
      "transcript",
      "version",
      "completion",
    ]) {
      assert.match(fish, new RegExp(`-n __fish_use_subcommand -a ${command} `));
    }
    assert.match(fish, /__fish_seen_subcommand_from namespace" -a 'create list describe delete'/);
    assert.equal(skein(["completion", "tcsh"]).status, 2);
  });
});
