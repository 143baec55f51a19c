/**
 * An engine commit as it crosses to the storage thread: the encoded batch (`encodeBatch`,
 * sql/run-commit.ts) flattened into one array of strings, numbers and nulls, and rebuilt
 * into `EncodedAppend` records on the thread. A structured clone of an array of primitives
 * costs a fraction of one of the same values as objects (no property names to write and
 * read back, no object shapes to rebuild on the other side), and the thread's share of that
 * cost counts against every commit it serves.
 *
 * Layout, per append in batch order: runId, workflowId, namespace, definitionVersion,
 * status, starts (0 or 1), firstAt, lastAt, end (at, output, failure code, failure message:
 * four nulls while the run lives), the outbox write count and each write's activityId,
 * attempt and state (-1 for no outbox list), the event count, the row count and each row's
 * stored text.
 */

import type { RunStatus } from "../../engine/history.ts";
import type { OutboxState, OutboxWrite } from "../../engine/store.ts";
import type { EncodedAppend } from "../sql/run-commit.ts";

export type CommitMessage = (string | number | null)[];

export function packCommit(batch: readonly EncodedAppend[]): CommitMessage {
  const out: CommitMessage = [];
  // Indexed loops: a `for…of` costs an iterator result per item where V8 does not inline it.
  for (let i = 0; i < batch.length; i++) {
    const r = batch[i]!;
    const end = r.end;
    out.push(
      r.runId,
      r.workflowId,
      r.namespace,
      r.definitionVersion,
      r.status,
      r.starts ? 1 : 0,
      r.firstAt,
      r.lastAt,
      end === null ? null : end.at,
      end?.output ?? null,
      end?.failure?.[0] ?? null,
      end?.failure?.[1] ?? null,
    );
    const outbox = r.outbox;
    if (outbox === undefined) out.push(-1);
    else {
      out.push(outbox.length);
      for (let k = 0; k < outbox.length; k++) {
        const o = outbox[k]!;
        out.push(o.activityId, o.attempt, o.state);
      }
    }
    const rows = r.events;
    out.push(r.count, rows.length);
    for (let k = 0; k < rows.length; k++) out.push(rows[k]!);
  }
  return out;
}

export function unpackCommit(message: CommitMessage): EncodedAppend[] {
  const batch: EncodedAppend[] = [];
  let i = 0;
  const str = () => message[i++] as string;
  const num = () => message[i++] as number;
  while (i < message.length) {
    const runId = str();
    const workflowId = str();
    const namespace = str();
    const definitionVersion = str();
    const status = str() as RunStatus;
    const starts = num() === 1;
    const firstAt = num();
    const lastAt = num();
    const endAt = message[i++] as number | null;
    const output = message[i++] as string | null;
    const code = message[i++] as string | null;
    const reason = message[i++] as string | null;
    const outboxCount = num();
    let outbox: OutboxWrite[] | undefined;
    if (outboxCount >= 0) {
      outbox = new Array(outboxCount);
      for (let k = 0; k < outboxCount; k++) {
        outbox[k] = { activityId: num(), attempt: num(), state: str() as OutboxState };
      }
    }
    const count = num();
    const events: string[] = new Array(num());
    for (let k = 0; k < events.length; k++) events[k] = str();
    batch.push({
      runId,
      workflowId,
      namespace,
      definitionVersion,
      status,
      events,
      count,
      starts,
      firstAt,
      lastAt,
      end:
        endAt === null
          ? null
          : { at: endAt, output, failure: code === null ? null : [code, reason ?? ""] },
      outbox,
    });
  }
  return batch;
}
