// `skein worker` verb parsing: the spec's shape (kind, document, option pairs), defaults, and
// a usage error (exit 2) for every bad value.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { UsageError } from "../../src/common/cli.ts";
import { parseWorkerArgs, WORKER_DEFAULTS } from "../../src/worker/verb.ts";
import { spawnWorker } from "../support/worker-endpoint.ts";

describe("skein worker arguments", () => {
  test("defaults", () => {
    assert.deepEqual(parseWorkerArgs(["exec", "w.yaml"]), {
      kind: "exec",
      document: "w.yaml",
      target: WORKER_DEFAULTS.endpoint,
      namespace: "default",
      concurrency: 16,
      reconnectInitialMs: 500,
      reconnectMaxMs: 30_000,
      reconnectMaxAttempts: 0,
      tokenFile: undefined,
    });
  });

  test("every option of the spec's verb", () => {
    const args = parseWorkerArgs([
      "module",
      "w.json",
      "--endpoint",
      "http://127.0.0.1:9000",
      "--namespace",
      "team-a",
      "--concurrency",
      "64",
      "--reconnect-initial-backoff",
      "0.25",
      "--reconnect-max-backoff",
      "4",
      "--reconnect-max-attempts",
      "7",
      "--token-file",
      "tok",
    ]);
    assert.deepEqual(args, {
      kind: "module",
      document: "w.json",
      target: "127.0.0.1:9000",
      namespace: "team-a",
      concurrency: 64,
      reconnectInitialMs: 250,
      reconnectMaxMs: 4000,
      reconnectMaxAttempts: 7,
      tokenFile: "tok",
    });
  });

  const bad: [args: string[], message: RegExp][] = [
    [["exec"], /expected at least 2 argument/],
    [["exec", "a", "b"], /unexpected argument "b"/],
    // Not among the spec's verb options: agent workers learn the transport from the server.
    [["agent", "w.yaml", "--agent-url", "http://127.0.0.1:7380"], /Unknown option '--agent-url'/],
    [["agentish", "w.yaml"], /^--kind: must be one of "exec", "module", "http"/],
    [["exec", "w.yaml", "--queue", "q"], /Unknown option '--queue'/],
    [["exec", "w.yaml", "--endpoint", "nowhere"], /^--endpoint: must be host:port/],
    [
      ["exec", "w.yaml", "--concurrency", "0"],
      /^--concurrency: must be between 1 and 4096, found 0/,
    ],
    [["exec", "w.yaml", "--concurrency", "1.5"], /^--concurrency: expected a whole number/],
    [
      ["exec", "w.yaml", "--concurrency", "many"],
      /^--concurrency: expected u32 1\.\.4096, found string/,
    ],
    [
      ["exec", "w.yaml", "--reconnect-initial-backoff", "0"],
      /^--reconnect-initial-backoff: must be at least 0.001/,
    ],
    [
      ["exec", "w.yaml", "--reconnect-initial-backoff", "5", "--reconnect-max-backoff", "1"],
      /^--reconnect-max-backoff: must be at least --reconnect-initial-backoff/,
    ],
    [
      ["exec", "w.yaml", "--reconnect-max-attempts=-1"],
      /^--reconnect-max-attempts: must not be negative/,
    ],
    [["exec", "w.yaml", "--namespace", "  "], /^--namespace: must not be empty/],
  ];
  for (const [args, message] of bad) {
    test(`${args.join(" ")} is a usage error`, () => {
      assert.throws(
        () => parseWorkerArgs(args),
        (error: Error) => {
          assert.ok(error instanceof UsageError);
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }

  test("the real program exits 2 on a usage error", async () => {
    const w = spawnWorker(["exec", "w.yaml", "--concurrency", "0"]);
    assert.equal(await w.exited, 2);
    assert.match(w.stderr(), /^skein: --concurrency: must be between 1 and 4096, found 0\n$/);
  });
});
