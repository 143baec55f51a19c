// A stand-in for the server's persistence layer (built in another issue), for engine tests
// and benchmarks: each engine commit is one append of JSON lines to a real file (optionally
// fsynced), and loadRunning / loadOutbox fold the file back. Real file, real process deaths;
// not SQL.

import { type FileHandle, open, readFile } from "node:fs/promises";
import type { HistoryEvent } from "../../src/workflow/engine/history.ts";
import type {
  EngineStore,
  OutboxRow,
  RunAppend,
  StoredRun,
} from "../../src/workflow/engine/store.ts";

export class FileStore implements EngineStore {
  readonly path: string;
  readonly #sync: boolean;
  commits = 0;
  #file: FileHandle | undefined;

  constructor(path: string, options: { sync?: boolean } = {}) {
    this.path = path;
    this.#sync = options.sync ?? false;
  }

  async commit(batch: readonly RunAppend[]): Promise<void> {
    const text = `${batch.map((r) => JSON.stringify(r)).join("\n")}\n`;
    // Write and sync off the event loop, so workers keep being served during the sync.
    this.#file ??= await open(this.path, "a");
    await this.#file.write(text);
    if (this.#sync) await this.#file.datasync();
    this.commits++;
  }

  async close(): Promise<void> {
    await this.#file?.close();
    this.#file = undefined;
  }

  async runs(): Promise<Map<string, StoredRun & { status: string }>> {
    const text = await readFile(this.path, "utf8").catch(() => "");
    const runs = new Map<string, StoredRun & { status: string; history: HistoryEvent[] }>();
    for (const line of text.split("\n")) {
      if (line === "") continue;
      const r = JSON.parse(line) as RunAppend;
      const run = runs.get(r.runId) ?? {
        runId: r.runId,
        workflowId: r.workflowId,
        namespace: r.namespace,
        definitionVersion: r.definitionVersion,
        history: [],
        status: "Running",
      };
      run.history.push(...r.events);
      run.status = r.status;
      runs.set(r.runId, run);
    }
    return runs;
  }

  async loadRunning(): Promise<StoredRun[]> {
    return [...(await this.runs()).values()].filter(
      (r) => r.status === "Running" || r.status === "Paused",
    );
  }

  /** Every outbox row with its latest state, done ones included. */
  async outbox(): Promise<OutboxRow[]> {
    const text = await readFile(this.path, "utf8").catch(() => "");
    const rows = new Map<string, OutboxRow>();
    for (const line of text.split("\n")) {
      if (line === "") continue;
      const r = JSON.parse(line) as RunAppend;
      for (const w of r.outbox ?? []) {
        rows.set(`${r.runId}/${w.activityId}/${w.attempt}`, {
          runId: r.runId,
          namespace: r.namespace,
          ...w,
        });
      }
    }
    return [...rows.values()];
  }

  async loadOutbox(): Promise<OutboxRow[]> {
    return (await this.outbox()).filter((r) => r.state !== "done");
  }

  async history(runId: string): Promise<HistoryEvent[]> {
    return [...((await this.runs()).get(runId)?.history ?? [])];
  }
}
