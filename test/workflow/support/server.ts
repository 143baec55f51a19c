/**
 * Test support: runs the real `skein serve` as a child process on a free port with a temp
 * data directory, waits for its `listening on URL` line, and offers a small HTTP helper.
 * Nothing here stands in for a server component.
 */

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { loadSigningKey } from "../../../src/workflow/auth/keys.ts";
import { issueToken, type TokenRequest } from "../../../src/workflow/auth/tokens.ts";

export const SKEIN_BIN = fileURLToPath(new URL("../../../bin/skein.ts", import.meta.url));

export async function tempDir(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "skein-test-"));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Writes `skein.toml` in `dir` with a data dir under it and the given extra TOML. */
export async function writeConfig(dir: string, toml = ""): Promise<string> {
  const file = join(dir, "skein.toml");
  await writeFile(file, `data_dir = "data"\n${toml}\n`);
  return file;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  readonly url: string;
  /** The gRPC worker endpoint (`host:port`), when the server runs workflows. */
  readonly grpc: string | undefined;
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<Exit>;
  /** Sends `signal` (default SIGTERM) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * Starts `skein serve --config FILE --listen 127.0.0.1:0` and waits until it listens;
 * `nodeArgs` go to its Node before the program (V8 flags that NODE_OPTIONS refuses).
 */
export function startServe(
  configFile: string,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      SKEIN_BIN,
      "serve",
      "--config",
      configFile,
      "--listen",
      "127.0.0.1:0",
      "--grpc-listen",
      "127.0.0.1:0",
      ...extraArgs,
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, SKEIN_LOG_LEVEL: "warn", ...env } },
  );
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  const exited = new Promise<Exit>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: string) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match !== null) {
        resolve({
          url: match[1]!,
          grpc: /worker endpoint on (\S+)/.exec(out)?.[1],
          child,
          stdout: () => out,
          stderr: () => err,
          exited,
          stop: (signal = "SIGTERM") => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
    child.stderr!.on("data", (chunk: string) => {
      err += chunk;
    });
    exited.then((exit) =>
      reject(
        new Error(`skein serve exited (${exit.code ?? exit.signal}) before listening:\n${err}`),
      ),
    );
  });
}

/** Runs a `skein` command to completion. */
export function skein(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [SKEIN_BIN, ...args], {
    encoding: "utf8",
    env: { ...process.env, SKEIN_LOG_LEVEL: "warn", ...env },
  });
}

export async function adminToken(dir: string): Promise<string> {
  return (await readFile(join(dir, "data", "admin.token"), "utf8")).trim();
}

/** The suite's server from `serveForSuite`, set once its `before` hook has run. */
export interface Served {
  dir: Awaited<ReturnType<typeof tempDir>>;
  server: ServerProcess;
  /** The admin token the server wrote on first start. */
  admin: string;
}

/**
 * Registers hooks on the enclosing suite (or file) that start `skein serve` with the config
 * `toml` in a fresh temp folder before its tests and stop and remove it after them; the
 * returned object is filled in by the time the tests run.
 */
export function serveForSuite(toml: string): Served {
  const s = {} as Served;
  before(async () => {
    s.dir = await tempDir();
    s.server = await startServe(await writeConfig(s.dir.path, toml));
    s.admin = await adminToken(s.dir.path);
  });
  after(async () => {
    await s.server?.stop();
    await s.dir?.remove();
  });
  return s;
}

/** A token signed by the server's own key in `dir`, as `skein token issue` makes them. */
export async function tokenFor(dir: string, request: Partial<TokenRequest> = {}): Promise<string> {
  const key = await loadSigningKey(join(dir, "data"));
  return issueToken(key.privateKey, {
    subject: "tester",
    namespaces: [],
    ttlSeconds: 600,
    ...request,
  });
}

export interface Answer {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read many JSON shapes; each asserts its own
  readonly body: any;
}

export async function call(
  url: string,
  method: string,
  path: string,
  options: { token?: string; body?: string | object; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(`${url}${path}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}
