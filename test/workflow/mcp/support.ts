// Shared by the MCP endpoint's tests: the SDK's own client connected to a real `skein serve`
// (Streamable HTTP, a bearer header, optionally a namespace scope), and one raw JSON-RPC POST
// over node:http for what a client library would not send (two bearers, an Origin, a
// connection held open).

import {
  type Agent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** The SDK client, signed in with `token`, on `/mcp` (with `?namespace=` when given). */
export async function mcpClient(
  serverUrl: string,
  token: string,
  options: { namespace?: string; path?: string } = {},
): Promise<Client> {
  const url = new URL(`${serverUrl}${options.path ?? "/mcp"}`);
  if (options.namespace !== undefined) url.searchParams.set("namespace", options.namespace);
  const client = new Client({ name: "skein-test", version: "0" });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

export interface RawRpc {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests assert each JSON shape themselves
  readonly body: any;
}

/**
 * One POST of `message` to `url`. `headers` may be an array of [name, value] pairs, so a
 * header can be sent twice; the JSON-RPC accept and protocol headers are added.
 */
export function rpc(
  url: string,
  message: unknown,
  options: { headers?: [string, string][]; agent?: Agent; method?: string } = {},
): Promise<RawRpc> {
  // A raw header list is sent as it is: Node adds no Host to it.
  const raw: string[] = [
    "host",
    new URL(url).host,
    ...(message === undefined ? [] : ["content-type", "application/json"]),
    "accept",
    "application/json, text/event-stream",
    "mcp-protocol-version",
    "2025-06-18",
  ];
  for (const [name, value] of options.headers ?? []) raw.push(name, value);
  const body = message === undefined ? undefined : JSON.stringify(message);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: options.method ?? "POST",
        headers: raw as unknown as OutgoingHttpHeaders,
        // Without an agent of the test's: a connection of its own, closed after the answer.
        agent: options.agent ?? false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bodyOf(res, text) }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A JSON answer, or the last message of an SSE answer (a session answers POSTs as SSE). */
function bodyOf(res: { headers: IncomingHttpHeaders }, text: string): unknown {
  if (text === "") return undefined;
  if (!res.headers["content-type"]?.startsWith("text/event-stream")) return JSON.parse(text);
  const data = text.split("\n").filter((line) => line.startsWith("data: "));
  return data.length === 0 ? undefined : JSON.parse(data.at(-1)!.slice("data: ".length));
}

export interface SessionClient {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  readonly sessionId: string;
}

/**
 * The SDK client in a session, returned once its GET stream (where the server notifies) is
 * open: the readiness signal is the stream's answer reaching the client's fetch.
 */
export async function sessionClient(
  serverUrl: string,
  token: string,
  options: { namespace?: string; setUp?: (client: Client) => void } = {},
): Promise<SessionClient> {
  const url = new URL(`${serverUrl}/mcp`);
  if (options.namespace !== undefined) url.searchParams.set("namespace", options.namespace);
  let opened: (status: number) => void = () => {};
  const streamOpen = new Promise<void>((resolve, reject) => {
    opened = (status) =>
      status === 200 ? resolve() : reject(new Error(`the GET stream was answered ${status}`));
  });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === "GET") opened(response.status);
      return response;
    },
  });
  const client = new Client({ name: "skein-test", version: "0" });
  options.setUp?.(client);
  await client.connect(transport);
  await streamOpen;
  return { client, transport, sessionId: transport.sessionId! };
}

/** An initialize request of protocol `version`. */
export const initialize = (version: string) => ({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "0" } },
});

/** A JSON-RPC request message. */
export const call = (method: string, params: object = {}, id = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});
