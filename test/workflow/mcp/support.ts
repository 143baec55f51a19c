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
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text === "" ? undefined : JSON.parse(text),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A JSON-RPC request message. */
export const call = (method: string, params: object = {}, id = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});
