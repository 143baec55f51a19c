/**
 * The gRPC side of a worker stream, kept thin: it times the hello, authenticates the stream
 * and admits its namespace (auth.ts), takes every message as the codec decoded it at the edge
 * (protocol/worker-stream/codec.ts: frames, or a refusal), and hands the matcher the hello,
 * each later frame and the stream's end. Frames going out are batched per event-loop turn
 * (`FrameBatcher`) behind the matcher's `SessionSink`. Every refusal ends the stream with its
 * gRPC status and `code: message` details.
 */

import * as grpc from "@grpc/grpc-js";
import { silentLogger } from "../../common/log.ts";
import { FrameBatcher } from "../../protocol/worker-stream/batcher.ts";
import {
  BatchRefusal,
  type CodecServerStream,
  type ReceivedWorkerBatch,
} from "../../protocol/worker-stream/codec.ts";
import { type DecodedHello, MAX_FRAMES_PER_BATCH } from "../../protocol/worker-stream/decode.ts";
import type { ServerFrame, WorkerFrame } from "../../protocol/worker-stream/frames.ts";
import { StreamRefusal, streamRefusal } from "../errors.ts";
import type { Matcher, MatcherOptions, Session, SessionSink } from "../matching/matcher.ts";
import { admitNamespace, authenticate, type NamespaceGate, type VerifyToken } from "./auth.ts";

/** How long a new stream may take to send its hello. */
export const HELLO_TIMEOUT_MS = 10_000;

export interface WorkerStreamOptions extends MatcherOptions {
  readonly verify: VerifyToken;
  readonly namespaceGate: NamespaceGate;
  /** How long a new stream may take to send its hello (HELLO_TIMEOUT_MS). */
  readonly helloTimeoutMs?: number;
}

/** The gRPC handler for `WorkerService.Connect`, feeding `matcher`. */
export function workerStreamHandler(
  matcher: Matcher,
  options: WorkerStreamOptions,
): (stream: CodecServerStream) => void {
  const log = options.logger ?? silentLogger();
  return (stream) => {
    let session: Session | undefined;
    /** Frames that arrived after the hello, while it is being checked. */
    let pending: WorkerFrame[] | undefined;
    let ended = false;
    const refuse = (error: unknown) => {
      if (ended) return;
      ended = true;
      const refusal = asRefusal(error);
      log.info({ code: refusal.code }, `worker stream refused: ${refusal.message}`);
      stream.emit("error", {
        code: grpc.status[refusal.grpcStatus],
        details: `${refusal.code}: ${refusal.message}`,
      });
    };
    const helloTimer = setTimeout(
      () => refuse(streamRefusal("hello_timeout", "no hello frame in time")),
      options.helloTimeoutMs ?? HELLO_TIMEOUT_MS,
    );
    const close = () => {
      clearTimeout(helloTimer);
      ended = true;
      if (session !== undefined) matcher.close(session);
    };
    stream.on("error", () => close());
    stream.on("cancelled", () => close());
    stream.on("close", () => close());
    stream.on("end", () => {
      close();
      stream.end();
    });

    const open = async (hello: DecodedHello) => {
      const principal = await authenticate(options.verify, stream.metadata);
      await admitNamespace(principal, hello.namespace, options.namespaceGate);
    };
    const welcome = (hello: DecodedHello) => {
      clearTimeout(helloTimer);
      if (ended) return;
      session = matcher.open(hello, sinkOf(stream));
      const queued = pending ?? [];
      pending = undefined;
      for (const frame of queued) matcher.receive(session, frame);
    };

    const receive = (message: ReceivedWorkerBatch) => {
      const frames = decodeBatch(message);
      if (session !== undefined) {
        // Indexed: a `for…of` costs an iterator result per frame where V8 does not inline it.
        for (let i = 0; i < frames.length; i++) matcher.receive(session, frames[i]!);
        return;
      }
      if (pending !== undefined) {
        if (pending.length + frames.length > MAX_FRAMES_PER_BATCH) {
          throw invalidFrame(`sent more than ${MAX_FRAMES_PER_BATCH} frames before the welcome`);
        }
        pending.push(...frames);
        return;
      }
      // An empty batch before the hello changes nothing.
      if (frames.length === 0) return;
      const [first, ...rest] = frames;
      if (first!.frame !== "hello") {
        throw streamRefusal("hello_expected", "the first frame must be hello");
      }
      const hello = first!.hello;
      pending = rest;
      open(hello).then(
        () => {
          try {
            welcome(hello);
          } catch (error) {
            refuse(error);
          }
        },
        (error: unknown) => {
          clearTimeout(helloTimer);
          refuse(error);
        },
      );
    };

    stream.on("data", (message: ReceivedWorkerBatch) => {
      if (ended) return;
      try {
        receive(message);
      } catch (error) {
        refuse(error);
      }
    });
  };
}

/** The stream behind a session: frames of one turn go out as one batch. */
function sinkOf(stream: CodecServerStream): SessionSink {
  let closed = false;
  const out = new FrameBatcher<ServerFrame>((frames) => {
    if (!closed) stream.write(frames);
  });
  return {
    push: (frame) => out.push(frame),
    flush: () => out.flush(),
    closed() {
      closed = true;
      out.clear();
    },
    abort(message) {
      const refusal = streamRefusal("stream_aborted", message);
      stream.emit("error", {
        code: grpc.status[refusal.grpcStatus],
        details: `${refusal.code}: ${refusal.message}`,
      });
    },
  };
}

/**
 * One worker message's frames (the codec decoded and checked each), or the refusal that ends
 * the stream.
 */
function decodeBatch(message: ReceivedWorkerBatch): WorkerFrame[] {
  if (message instanceof BatchRefusal) throw streamRefusal(message.code, message.message);
  return message;
}

function invalidFrame(reason: string): StreamRefusal {
  return streamRefusal("invalid_frame", reason);
}

/**
 * The refusal a thrown error ends the stream with: the matcher and auth raise catalogue
 * StreamRefusals; anything else is a fault of the server's own (`internal`).
 */
function asRefusal(error: unknown): StreamRefusal {
  if (error instanceof StreamRefusal) return error;
  const message = error instanceof Error ? error.message : String(error);
  return streamRefusal("internal", message);
}
