/**
 * One client connection of the store's socket server:
 *
 *   admitted ──hello──▶ ready ──(close / refusal)──▶ closed
 *
 * The first frame must be `hello`, within timeout_ms; it fixes the connection's max_frame
 * (the smaller of both sides'). Then many requests may be in flight; each is answered under
 * its id, in any order. Every frame exchange is bounded by timeout_ms: a frame begun and not
 * finished in time closes the connection with `timeout`. A frame above max_frame closes the
 * connection with `frame_too_large`; an answer above it is replaced by a `frame_too_large`
 * refusal of that request. With `idp`, hello's pass is verified before the connection is
 * ready and each act is decided before it joins the store's queue (request-queue.ts).
 */

import type { Socket } from "node:net";
import { DecodeError, decodeOrThrow } from "../../common/decode/index.ts";
import { type ErrorShape, isCodedError, SkeinError } from "../../common/errors.ts";
import { VERSION } from "../../common/version.ts";
import type { Store } from "../engine/index.ts";
import { storeError } from "../errors.ts";
import { type ActArgs, tagRefsAsBranches } from "../idp/acts.ts";
import type { Admission, Again, IdpGate } from "../idp/gate.ts";
import type { Principal } from "../idp/passes.ts";
import { decodePayload, encodeFrame, FrameReader } from "./frames.ts";
import {
  type HelloResult,
  helloDecoder,
  type Request,
  type Response,
  requestDecoder,
} from "./protocol.ts";
import { type Queued, refusal } from "./request-queue.ts";
import { decodeArgs, type Session } from "./verbs.ts";

export function refusalFrame(id: number, error: ErrorShape): Buffer {
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

export function serveConnection(
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
    let decoded: unknown;
    const admitted = principal!.then((who) => {
      // A sealed page position is opened first: the verb runs from the real one.
      const opened = gate!.openPosition(sent.verb, sent.args);
      request = { ...sent, args: opened.args };
      // Decoded once: the verb runs from these args too (a put's records are not walked twice).
      decoded = decodeArgs(request.verb, request.args);
      return gate!.admit(
        who,
        request.verb,
        tagRefsAsBranches(decoded as ActArgs, (c, n) => store.tagBranch(c, n)),
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
            enqueue({ ...item, decoded, send: afterAct(item, admission, enqueue, send) });
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
