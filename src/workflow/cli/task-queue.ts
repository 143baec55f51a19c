/**
 * `skein task-queue describe QUEUE`: the workers connected to one task queue of a namespace
 * (`POST /task-queues/describe`), their kinds and capacities, and the attempts waiting in
 * its backlog: where to look when describe says an activity is `waiting`.
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { request } from "./client.ts";
import { reportRefusal } from "./hints.ts";
import {
  CLIENT_HELP,
  clientOf,
  NAMESPACE_HELP,
  namespaced,
  namespacedOptions,
  outputMode,
} from "./options.ts";
import { emit, fields, table } from "./output.ts";

interface QueueAnswer {
  namespace: string;
  task_queue: string;
  workers: {
    name: string;
    kind: string;
    concurrency: number;
    busy: number;
    actions: string[];
    deployment: string | null;
  }[];
  capacity: number;
  busy: number;
  backlog: number;
  backlog_by_action: Record<string, number>;
}

function queueText(q: QueueAnswer): string {
  const backlog = Object.entries(q.backlog_by_action)
    .map(([action, n]) => `${action} ${n}`)
    .join(", ");
  return [
    fields([
      ["task queue", q.task_queue],
      ["namespace", q.namespace],
      ["workers", q.workers.length],
      ["capacity", `${q.busy} busy of ${q.capacity}`],
      ["backlog", Number(q.backlog) === 0 ? "0" : `${q.backlog} (${backlog})`],
    ]),
    "",
    table(
      ["WORKER", "KIND", "BUSY", "CONCURRENCY", "DEPLOYMENT", "ACTIONS"],
      q.workers.map((w) => [
        w.name,
        w.kind,
        String(w.busy),
        String(w.concurrency),
        w.deployment ?? "-",
        w.actions.join(","),
      ]),
    ),
  ].join("\n");
}

export const taskQueueCommand: Command = {
  name: "task-queue",
  summary: "describe a task queue: connected workers, capacities, backlog",
  verbs: ["describe"],
  help: [
    "describe QUEUE [-n N] [-s URL] [-t TOKEN] [-o text|json]",
    "",
    CLIENT_HELP,
    NAMESPACE_HELP,
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    if (verb !== "describe") {
      throw new UsageError(`expected "task-queue describe", found ${verb ?? "nothing"}`);
    }
    const { values, positionals } = parseOptions(rest, namespacedOptions, { min: 1, max: 1 });
    const mode = outputMode(values.output);
    try {
      const r = (await request(clientOf(values), "POST", "/task-queues/describe", {
        ...namespaced(values.namespace),
        task_queue: positionals[0],
      })) as QueueAnswer;
      emit(io, mode, r, () => queueText(r));
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      return reportRefusal(io, error);
    }
  },
};
