// Shared set-up for the deployment tests: a worker document and a worker token file in a
// temp folder, a gRPC worker endpoint in the test process (the supervised children connect
// to it), and small process checks (is a pid alive; wait until a condition holds).

import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { startEndpoint, tokenFile, writeJson } from "../../support/worker-endpoint.ts";

export { until } from "../../support/until.ts";

export interface WorkerFixture {
  readonly document: string;
  readonly token: string;
  readonly endpoint: Awaited<ReturnType<typeof startEndpoint>>;
  /** A verb launching an exec worker on queue `q` against the test endpoint. */
  verb(...extra: string[]): string[];
  /** A full PUT body. */
  record(overrides?: Record<string, unknown>, extra?: string[]): Record<string, unknown>;
}

export async function workerFixture(dir: string): Promise<WorkerFixture> {
  const document = await writeJson(dir, "worker.json", {
    name: "echoer",
    task_queue: "q",
    actions: { echo: { command: ["cat"] } },
  });
  const token = await tokenFile(dir, "worker-all");
  const endpoint = await startEndpoint();
  const verb = (...extra: string[]) => [
    "worker",
    "exec",
    document,
    "--endpoint",
    endpoint.address,
    "--token-file",
    token,
    "--reconnect-initial-backoff",
    "0.05",
    "--reconnect-max-backoff",
    "0.2",
    ...extra,
  ];
  return {
    document,
    token,
    endpoint,
    verb,
    record: (overrides = {}, extra = []) => ({
      artifact: { type: "builtin", verb: verb(...extra) },
      namespaces: ["default"],
      task_queue: "q",
      desired: "running",
      ...overrides,
    }),
  };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0); /proc says whether it is one.
  return readProcState(pid) !== "Z";
}

function readProcState(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** Live (non-zombie) processes whose command line mentions `text`: a process listing. */
export function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (cmdline.includes(text) && alive(Number(entry))) found.push(Number(entry));
  }
  return found;
}

export async function logText(dataDir: string, name: string): Promise<string> {
  return readFile(join(dataDir, "deployments", "logs", `${encodeURIComponent(name)}.log`), "utf8");
}
