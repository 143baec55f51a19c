/**
 * The store's socket server. Each connection moves through
 *
 *   admitted ──hello──▶ ready ──(close / refusal)──▶ closed
 *
 * Admission is bounded by max_clients: an excess connection gets a `max_clients` refusal
 * (id 0) and is closed. The first frame must be `hello`, within timeout_ms; it fixes the
 * connection's max_frame (the smaller of both sides'). Then many requests may be in flight;
 * each is answered under its id, in any order. Every frame exchange is bounded by
 * timeout_ms: a frame begun and not finished in time closes the connection with `timeout`.
 * A frame above max_frame closes the connection with `frame_too_large`; an answer above it
 * is replaced by a `frame_too_large` refusal of that request.
 *
 * Requests from every connection join one queue and run in arrival order. Commits (put,
 * delete, append_prune) go through the store's commit pipeline: each is built at once on
 * the latest head and answered when durable, while the commits after it are built during
 * its flush; commits arriving during a flush share the next transaction (one fsync). Any
 * other request waits until every commit before it is durable (or failed), then runs: it
 * sees exactly the commits that arrived before it, and nothing not yet durable. A failed
 * flush answers its commits, and every commit built on them, with `internal_error`.
 * Freeing nodes after a deleting verb runs in steps between turns (the store's stepped
 * sweeps); such a verb is answered when its sweep ends, and other requests are answered
 * meanwhile.
 */

import { chmod } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { DecodeError, decodeOrThrow } from "../../common/decode/index.ts";
import { type ErrorShape, isCodedError, SkeinError } from "../../common/errors.ts";
import { VERSION } from "../../common/version.ts";
import type { EmbedService } from "../embed/service.ts";
import { committedBranch } from "../embed/writer-gate.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import { type ActArgs, tagRefsAsBranches } from "../idp/acts.ts";
import type { Admission, Again, IdpGate } from "../idp/gate.ts";
import type { Principal } from "../idp/passes.ts";
import type { QueryService } from "../query/service.ts";
import type { SearchService } from "../search/service.ts";
import { decodePayload, encodeFrame, FrameReader } from "./frames.ts";
import {
  type HelloResult,
  helloDecoder,
  type Request,
  type Response,
  requestDecoder,
} from "./protocol.ts";
import {
  decodeArgs,
  PIPELINED_VERBS,
  runVerb,
  type Session,
  servedVerbs,
  type VerbServices,
} from "./verbs.ts";

export interface StoreServerOptions {
  /** socket */
  readonly socketPath: string;
  /** max_frame */
  readonly maxFrame: number | bigint;
  /** max_clients */
  readonly maxClients: number | bigint;
  /** timeout_ms */
  readonly timeoutMs: number | bigint;
  /** With `idp`: hello needs a pass and every act is decided by the identity provider. */
  readonly idp?: IdpGate | null;
  /** The query group's service (null or absent: queries are refused as disabled). */
  readonly queries?: QueryService | null;
  /** The embedding group's service (null or absent: embedding verbs answer embed_disabled). */
  readonly embed?: EmbedService | null;
  /** Search over embedded fields (null or absent: search.text answers embed_disabled). */
  readonly search?: SearchService | null;
  /** Told of each queued request's answer: its verb, `ok` or the refusal code, seconds. */
  readonly observe?: VerbObserver;
}

export type VerbObserver = (verb: string, outcome: string, seconds: number) => void;

export interface StoreServer {
  readonly clients: number;
  close(): Promise<void>;
}

export async function startStoreServer(
  store: Store,
  options: StoreServerOptions,
): Promise<StoreServer> {
  const maxFrame = Number(options.maxFrame);
  const maxClients = Number(options.maxClients);
  const services: VerbServices = {
    queries: options.queries ?? null,
    embed: options.embed ?? null,
    search: options.search ?? null,
  };
  const verbs = servedVerbs(services);
  const timeoutMs = Math.min(Number(options.timeoutMs), 2_147_483_647);
  // Between turns, not in one pause: requests are answered while nodes are freed.
  store.stepSweeps = true;
  const sockets = new Set<Socket>();
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
  const observe = options.observe;
  const enqueue = (item: Queued) => {
    queue.push(observe === undefined ? item : observed(item, observe));
    if (!scheduled && !waiting) {
      scheduled = true;
      setImmediate(drain);
    }
  };
  const everyone = new Set<Socket>();
  const server: Server = createServer((socket) => {
    everyone.add(socket);
    socket.on("close", () => everyone.delete(socket));
    if (sockets.size >= maxClients) {
      socket.end(
        refusalFrame(
          0,
          storeError("max_clients", `the store serves at most ${maxClients} clients`),
        ),
      );
      socket.on("error", () => {});
      return;
    }
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    serveConnection(socket, store, { maxFrame, timeoutMs }, enqueue, options.idp ?? null, verbs);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Only this user may connect: the socket is the store's whole access boundary without
    // idp. The socket file is made with mode 0600 (bind runs inside listen, synchronously,
    // under this umask), so there is no moment at which it is open wider.
    const umask = process.umask(0o177);
    try {
      server.listen(options.socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    } finally {
      process.umask(umask);
    }
  });
  // Kept, should a platform create it otherwise.
  await chmod(options.socketPath, 0o600);
  return {
    get clients() {
      return sockets.size;
    },
    close() {
      for (const socket of everyone) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

interface Queued {
  readonly request: Request;
  readonly session: Session;
  readonly send: (response: Response) => void;
  /** A commit's deadline for waiting on an embedding commit (set at its first wait). */
  admitBy?: number;
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
  return {
    ...item,
    send(response) {
      const outcome = response.ok ? "ok" : response.error.code;
      observe(item.request.verb, outcome, (performance.now() - started) / 1000);
      item.send(response);
    },
  };
}

function answer(store: Store, item: Queued, services: VerbServices): Response | Promise<Response> {
  const { request, session } = item;
  try {
    const result = runVerb(store, request.verb, request.args, session, services);
    if (result instanceof Promise) {
      return result.then(
        (value: unknown): Response => ({ id: request.id, ok: true, result: value }),
        (error: unknown) => refusal(request.id, error),
      );
    }
    return { id: request.id, ok: true, result };
  } catch (error) {
    return refusal(request.id, error);
  }
}

function refusal(id: number, error: unknown): Response {
  // An uncoded error is a defect, not a refusal; the caller still gets an answer.
  const shape = isCodedError(error)
    ? error
    : storeError("internal_error", error instanceof Error ? error.message : String(error));
  return { id, ok: false, error: { code: shape.code, message: shape.message } };
}

function refusalFrame(id: number, error: ErrorShape): Buffer {
  return encodeFrame({ id, ok: false, error: { code: error.code, message: error.message } });
}

/**
 * The answer of an admitted act, rewritten as its admission says before it is sent. The
 * rewrite may run the verb again (a filled page reads on): behind the store's queue, as the
 * same session, and the answer is sent once it is done.
 */
function afterAct(
  item: Omit<Queued, "send">,
  admission: Admission,
  enqueue: (item: Queued) => void,
  send: (response: Response) => void,
): (response: Response) => void {
  const { onResult, onRefusal } = admission;
  if (onResult === undefined && onRefusal === undefined) return send;
  const { id } = item.request;
  const again: Again = (args) =>
    new Promise((resolve, reject) => {
      enqueue({
        request: { ...item.request, args },
        session: item.session,
        send: (r) =>
          r.ok ? resolve(r.result) : reject(new SkeinError(r.error.code, r.error.message)),
      });
    });
  return (response) => {
    if (response.ok && onResult !== undefined) {
      onResult(response.result, again).then(
        (result) => send({ id, ok: true, result }),
        (error: unknown) => send(refusal(id, error)),
      );
    } else if (!response.ok && onRefusal !== undefined) {
      void onRefusal().finally(() => send(response));
    } else send(response);
  };
}

function codeOf(error: unknown): ErrorShape {
  return isCodedError(error) ? error : storeError("internal_error");
}

function serveConnection(
  socket: Socket,
  store: Store,
  limits: { maxFrame: number; timeoutMs: number },
  enqueue: (item: Queued) => void,
  gate: IdpGate | null,
  /** What hello names when asked: the verbs this server serves. */
  verbs: readonly string[],
): void {
  const reader = new FrameReader(limits.maxFrame);
  let session: Session | undefined;
  let frameLimit = limits.maxFrame;
  let timer: NodeJS.Timeout | undefined;
  let armed = false;
  let drainTimer: NodeJS.Timeout | undefined;

  const fail = (error: ErrorShape) => {
    clearTimeout(timer);
    armed = false;
    socket.end(refusalFrame(0, error));
    socket.destroySoon();
  };
  // The clock starts when a frame exchange starts and is not reset by later chunks, so a
  // peer trickling bytes cannot hold a connection past timeout_ms.
  const arm = () => {
    armed = true;
    timer = setTimeout(
      () =>
        fail(storeError("timeout", `no complete frame within timeout_ms (${limits.timeoutMs} ms)`)),
      limits.timeoutMs,
    );
  };
  // Until hello arrives the connection is in a frame exchange.
  arm();

  const send = (response: Response) => {
    if (socket.destroyed || socket.writableEnded) return;
    let frame = encodeFrame(response);
    if (frame.length - 4 > frameLimit) {
      frame = refusalFrame(
        response.id,
        storeError(
          "frame_too_large",
          `the answer needs ${frame.length - 4} bytes; max_frame is ${frameLimit}`,
        ),
      );
    }
    // An answer the peer does not read within timeout_ms ends the connection, so a client
    // that stops reading cannot make the server buffer without bound.
    if (!socket.write(frame) && drainTimer === undefined) {
      drainTimer = setTimeout(() => socket.destroy(), limits.timeoutMs);
      socket.once("drain", () => {
        clearTimeout(drainTimer);
        drainTimer = undefined;
      });
    }
  };

  const handle = (payload: Buffer) => {
    let request: Request;
    try {
      request = decodeOrThrow(requestDecoder, decodePayload(payload));
    } catch (error) {
      const message =
        error instanceof DecodeError ? error.message : "the payload is not MessagePack";
      fail(storeError("malformed_frame", message));
      return;
    }
    if (gate !== null && (session !== undefined || principal !== undefined)) {
      decided(request);
      return;
    }
    if (session === undefined) {
      if (request.verb !== "hello") {
        fail(storeError("hello_required"));
        return;
      }
      try {
        const hello = decodeOrThrow(helloDecoder, request.args ?? {});
        frameLimit = Math.min(hello.max_frame, limits.maxFrame);
        reader.limit = frameLimit;
        const result: HelloResult = {
          server: "skein-store",
          version: VERSION,
          max_frame: frameLimit,
          shards: store.shards,
          ...(hello.verbs === true ? { verbs } : {}),
        };
        if (gate !== null) {
          verifyHello(request.id, hello.client ?? "anonymous", hello.pass, result);
          return;
        }
        const client = hello.client ?? "anonymous";
        session = { client, author: client };
        send({ id: request.id, ok: true, result });
      } catch (error) {
        fail(storeError("invalid_request", `hello: ${(error as Error).message}`));
      }
      return;
    }
    enqueue({ request, session, send });
  };

  // With idp: hello's pass is verified before the connection is ready; requests that arrive
  // meanwhile wait for it. Each act is decided as it arrives (decisions of one connection
  // overlap), and joins the store's queue in the connection's own order once decided.
  let principal: Promise<Principal> | undefined;
  let order: Promise<void> = Promise.resolve();
  const verifyHello = (
    id: number,
    client: string,
    pass: string | undefined,
    result: HelloResult,
  ) => {
    principal = gate!.verify(pass);
    // Held by `order` too: nothing is admitted before hello is answered.
    order = principal.then(
      (who) => {
        // With an identity provider, commits are signed by the pass's subject by default.
        session = { client, author: who.subject.id };
        send({ id, ok: true, result });
        if (!reader.partial) {
          clearTimeout(timer);
          armed = false;
        }
      },
      (error: unknown) => fail(codeOf(error)),
    );
    principal.catch(() => {});
  };
  const decided = (sent: Request) => {
    let request = sent;
    const admitted = principal!.then((who) => {
      // A sealed page position is opened first: the verb runs from the real one.
      const opened = gate!.openPosition(sent.verb, sent.args);
      request = { ...sent, args: opened.args };
      return gate!.admit(
        who,
        request.verb,
        tagRefsAsBranches(decodeArgs(request.verb, request.args) as ActArgs, (c, n) =>
          store.tagBranch(c, n),
        ),
        { raw: sent.args, chosen: opened.chosen, carried: opened.carried },
      );
    });
    admitted.catch(() => {});
    order = order.then(() =>
      admitted.then(
        (admission) => {
          if (session !== undefined) {
            const as = admission.isolated === true ? { ...session, isolated: true } : session;
            const item = { request, session: as };
            enqueue({ ...item, send: afterAct(item, admission, enqueue, send) });
          }
        },
        (error: unknown) => {
          if (session !== undefined) send(refusal(request.id, error));
        },
      ),
    );
  };

  socket.on("data", (chunk: Buffer) => {
    // Frames are parsed one at a time as this loop asks for them, so frames that came in
    // the same chunk as hello are held to the limit hello just negotiated.
    for (const event of reader.push(chunk)) {
      if (event.kind === "too_large") {
        fail(
          storeError(
            "frame_too_large",
            `a frame of ${event.length} bytes; max_frame is ${frameLimit}`,
          ),
        );
        return;
      }
      handle(event.payload);
      if (socket.destroyed || socket.writableEnded) return;
    }
    if (session !== undefined && !reader.partial) {
      clearTimeout(timer);
      armed = false;
    } else if (!armed) arm();
  });
  socket.on("error", () => socket.destroy());
  socket.on("close", () => {
    clearTimeout(timer);
    clearTimeout(drainTimer);
  });
}
