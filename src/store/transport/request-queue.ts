/**
 * The store's one request queue. Requests from every connection join it and run in arrival
 * order. Commits (put, delete, append_prune) go through the store's commit pipeline: each is
 * built at once on the latest head and answered when durable, while the commits after it are
 * built during its flush; commits arriving during a flush share the next transaction (one
 * fsync). Any other request waits until every commit before it is durable (or failed), then
 * runs: it sees exactly the commits that arrived before it, and nothing not yet durable. A
 * failed flush answers its commits, and every commit built on them, with `internal_error`.
 * Writers to a branch the embedding walk is committing wait for it (bounded), and the
 * requests behind them wait their turn.
 */

import { isCodedError } from "../../common/errors.ts";
import type { EmbedService } from "../embed/service.ts";
import { committedBranch } from "../embed/writer-gate.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import type { Request, Response } from "./protocol.ts";
import { PIPELINED_VERBS, runDecoded, runVerb, type Session, type VerbServices } from "./verbs.ts";

/** Told of each queued request's answer: its verb, `ok` or the refusal code, seconds. */
export type VerbObserver = (verb: string, outcome: string, seconds: number) => void;

export interface Queued {
  readonly request: Request;
  readonly session: Session;
  readonly send: (response: Response) => void;
  /** `request.args` decoded already (by the identity gate, which decides from them). */
  readonly decoded?: unknown;
  /** A commit's deadline for waiting on an embedding commit (set at its first wait). */
  admitBy?: number;
}

/** The queue's entry: `enqueue(item)` answers the item through its `send`, in turn. */
export function requestQueue(
  store: Store,
  services: VerbServices,
  observe: VerbObserver | undefined,
): (item: Queued) => void {
  const queue: Queued[] = [];
  let scheduled = false;
  let waiting = false;
  // Runs queued requests in arrival order. A commit verb is built at once and answered
  // when durable (the pipeline overlaps its flush with the next commits' work); any other
  // verb first waits until every commit before it is durable, so it sees them all and
  // nothing that is not durable, and the requests after it wait their turn behind it.
  const drain = () => {
    scheduled = false;
    while (queue.length > 0) {
      const item = queue[0]!;
      const pipelined = PIPELINED_VERBS.has(item.request.verb);
      if (!pipelined && store.busy) {
        if (!waiting) {
          waiting = true;
          // On the next turn: the receipts of the commits it waited for go out first.
          void store.idle().then(() =>
            setImmediate(() => {
              waiting = false;
              drain();
            }),
          );
        }
        return;
      }
      const held = pipelined ? embeddingHold(services.embed, item) : undefined;
      if (held !== undefined) {
        // Writers to a branch the embedding walk is committing wait for it (bounded); the
        // requests behind wait their turn, so arrival order holds.
        waiting = true;
        void held.then(
          () => {
            waiting = false;
            drain();
          },
          (error: unknown) => {
            queue.shift();
            item.send(refusal(item.request.id, error));
            waiting = false;
            drain();
          },
        );
        return;
      }
      queue.shift();
      const response = answer(store, item, services);
      // Commits answer once durable; a deleting verb's sweep runs in steps over later
      // turns and answers at its end.
      if (response instanceof Promise) void response.then(item.send);
      else item.send(response);
      if (pipelined && queue.length > 0) {
        // The rest on the next turn: lmdb-js starts a flush from a setImmediate, so this
        // lets the commit just handed over start flushing while the next ones are built.
        scheduled = true;
        setImmediate(drain);
        return;
      }
    }
  };
  const enqueue = (item: Queued) => {
    queue.push(observe === undefined ? item : observed(item, observe));
    if (!scheduled && !waiting) {
      scheduled = true;
      setImmediate(drain);
    }
  };
  return enqueue;
}

/** Undefined when the commit may go ahead; else its wait for the walk's page (writer-gate.ts). */
function embeddingHold(embed: EmbedService | null, item: Queued): Promise<void> | undefined {
  if (embed === null) return undefined;
  const where = committedBranch(item.request.args);
  if (where === undefined) return undefined;
  item.admitBy ??= embed.gate.deadline();
  return embed.gate.wait(where.collection, where.branch, item.admitBy);
}

/** The request with its answer timed from now (its arrival in the queue). */
function observed(item: Queued, observe: VerbObserver): Queued {
  const started = performance.now();
  // The verb and the sender, not the item: its request must not outlive the call (answer).
  const { verb } = item.request;
  const { send } = item;
  return {
    ...item,
    send(response) {
      const outcome = response.ok ? "ok" : response.error.code;
      observe(verb, outcome, (performance.now() - started) / 1000);
      send(response);
    },
  };
}

function answer(store: Store, item: Queued, services: VerbServices): Response | Promise<Response> {
  const { request, session } = item;
  // Only the id outlives the call: a commit's answer waits for its flush, and holding the
  // request there would keep its decoded records (a put's thousand objects) alive through
  // it, for the garbage collector to copy into the old generation.
  const { id } = request;
  try {
    const result =
      item.decoded === undefined
        ? runVerb(store, request.verb, request.args, session, services)
        : runDecoded(store, request.verb, item.decoded, session, services);
    if (result instanceof Promise) {
      return result.then(
        (value: unknown): Response => ({ id, ok: true, result: value }),
        (error: unknown) => refusal(id, error),
      );
    }
    return { id, ok: true, result };
  } catch (error) {
    return refusal(id, error);
  }
}

export function refusal(id: number, error: unknown): Response {
  // An uncoded error is a defect, not a refusal; the caller still gets an answer.
  const shape = isCodedError(error)
    ? error
    : storeError("internal_error", error instanceof Error ? error.message : String(error));
  return { id, ok: false, error: { code: shape.code, message: shape.message } };
}
