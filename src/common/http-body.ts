/**
 * Reading an HTTP request body under a byte bound, for the servers built on `node:http`
 * (skein-idp, the store's MCP endpoint). A body over the bound is still read to its end and
 * dropped, nothing kept, before the caller answers 413: a server that closes a connection
 * with unread bytes makes the kernel send a reset, and a client still sending its body then
 * loses the answer it was sent. Dropping stops at `discardBytes` (a declared length past it is
 * not read at all): the connection is cut, and that is the answer. The outcome is a value, not
 * an exception: refusing costs no stack trace.
 */

import type { IncomingMessage } from "node:http";

export interface BodyBounds {
  /** Largest body the caller accepts. */
  readonly maxBytes: number;
  /** Most bytes read (and dropped) of a larger body before the connection is cut. */
  readonly discardBytes: number;
  /** The whole body must arrive within this, when given. */
  readonly timeoutMs?: number;
}

export type BodyRead =
  | { readonly kind: "body"; readonly bytes: Buffer }
  /** Over `maxBytes`: read to its end and dropped, or cut past `discardBytes`. */
  | { readonly kind: "too_large" }
  /** Not all there within `timeoutMs`; `tooLarge` when what was declared or read is over. */
  | { readonly kind: "timeout"; readonly tooLarge: boolean }
  /** The connection closed or failed before the body's end. */
  | { readonly kind: "cut_off" };

const TOO_LARGE: BodyRead = { kind: "too_large" };
const CUT_OFF: BodyRead = { kind: "cut_off" };

export function readBoundedBody(request: IncomingMessage, bounds: BodyBounds): Promise<BodyRead> {
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > bounds.discardBytes) {
    request.socket.destroy();
    return Promise.resolve(TOO_LARGE);
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = declared > bounds.maxBytes;
    let settled = false;
    const settle = (read: BodyRead) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(read);
    };
    const timer =
      bounds.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            request.removeAllListeners("data");
            request.pause();
            settle({ kind: "timeout", tooLarge: over });
          }, bounds.timeoutMs);
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > bounds.discardBytes) {
        settle(TOO_LARGE);
        request.socket.destroy();
        return;
      }
      if (size > bounds.maxBytes && !over) {
        over = true;
        chunks.length = 0;
      }
      if (!over) chunks.push(chunk);
    });
    request.once("end", () =>
      settle(over ? TOO_LARGE : { kind: "body", bytes: Buffer.concat(chunks) }),
    );
    // After "end" this changes nothing; before it, the body was cut off.
    request.once("close", () => settle(CUT_OFF));
    request.once("error", () => settle(CUT_OFF));
  });
}
