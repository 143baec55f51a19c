/**
 * Test support: HTTP/1.1 over a raw TCP socket, for what fetch cannot send (a malformed
 * request line, a bad percent-escape, oversized headers) and for holding silent or half-sent
 * connections open. Reads until the server closes and parses the one response it wrote.
 */

import { connect, type Socket } from "node:net";

export interface RawAnswer {
  readonly status: number | undefined;
  readonly headers: Readonly<Record<string, string>>;
  // biome-ignore lint/suspicious/noExplicitAny: tests assert each JSON shape themselves
  readonly body: any;
  readonly text: string;
}

export function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

/** Opens a TCP connection to the server of `url` and waits until it connects. */
export function open(url: string): Promise<Socket> {
  const { host, port } = hostPort(url);
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves with everything the server sent once it closes `socket` (errors count as close). */
export function readToClose(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", () => {});
    socket.once("close", () => resolve(text));
  });
}

export function parseResponse(text: string): RawAnswer {
  const split = text.indexOf("\r\n\r\n");
  if (split < 0) return { status: undefined, headers: {}, body: undefined, text };
  const [statusLine, ...lines] = text.slice(0, split).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const raw = text.slice(split + 4);
  let body: unknown;
  try {
    body = raw === "" ? undefined : JSON.parse(raw);
  } catch {
    body = raw;
  }
  return { status: Number(statusLine!.split(" ")[1]), headers, body, text };
}

/** Sends `request` verbatim on a new connection and parses the answer. */
export async function rawRequest(url: string, request: string): Promise<RawAnswer> {
  const socket = await open(url);
  const closed = readToClose(socket);
  socket.write(request);
  return parseResponse(await closed);
}
