/**
 * Request and response plumbing for skein-idp's own endpoints (AuthZEN, placement, the login
 * page): bodies read with a byte bound (the declared length is checked first, then the bytes
 * as they arrive), JSON answers, and errors as `{"error":{"code","message"}}` with the
 * catalogue's status. Messages come from the catalogue or the decoder (field paths and
 * rules), never from request contents such as tokens or passwords.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { SkeinError } from "../../common/errors.ts";
import { idpError } from "../errors.ts";

export function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > maxBytes) {
    return Promise.reject(idpError("body_too_large", `the body must be at most ${maxBytes} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    request.on("data", (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxBytes) {
        failed = true;
        reject(idpError("body_too_large", `the body must be at most ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    request.on("error", (error) => {
      if (!failed) reject(error);
      failed = true;
    });
  });
}

export function isJson(request: IncomingMessage): boolean {
  const type = request.headers["content-type"] ?? "";
  return /^application\/json\s*(;|$)/i.test(type);
}

export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  response.end(body);
}

export function sendError(response: ServerResponse, error: unknown): void {
  const coded =
    error instanceof SkeinError && error.status < 500 ? error : idpError("internal_error");
  const headers: Record<string, string> = {};
  if (coded.status === 401) headers["www-authenticate"] = 'Bearer realm="skein-idp"';
  if (coded.status === 413) headers.connection = "close";
  const body = JSON.stringify({ error: { code: coded.code, message: coded.message } });
  response.writeHead(coded.status, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  response.end(body);
}
