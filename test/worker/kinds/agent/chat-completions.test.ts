// The agent kind's model client reads a streamed reply whatever line endings the server-sent
// events use (LF, CRLF, CR: all three are the format's), against a real HTTP server that
// writes the stream in pieces split mid-line.

import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { complete } from "../../../../src/worker/kinds/agent/chat-completions.ts";

const EVENTS = [
  { choices: [{ delta: { content: "hel" } }] },
  { choices: [{ delta: { content: "lo" } }] },
  {
    choices: [
      { delta: { tool_calls: [{ index: 0, id: "c1", function: { name: "to", arguments: "{" } }] } },
    ],
  },
  {
    choices: [{ delta: { tool_calls: [{ index: 0, function: { name: "ol", arguments: "}" } }] } }],
  },
  { choices: [], usage: { total_tokens: 42 } },
];

function stream(eol: string): string {
  return `${EVENTS.map((e) => `data: ${JSON.stringify(e)}${eol}${eol}`).join("")}data: [DONE]${eol}${eol}`;
}

describe("streamed chat completions", () => {
  let server: Server;
  let baseUrl: string;
  before(async () => {
    server = createServer((request, response) => {
      const eol = { "/lf": "\n", "/crlf": "\r\n", "/cr": "\r" }[request.url!.split("/chat")[0]!]!;
      response.writeHead(200, { "content-type": "text/event-stream" });
      const text = stream(eol);
      // Pieces of 7 bytes: events and line endings are split across reads.
      for (let i = 0; i < text.length; i += 7) response.write(text.slice(i, i + 7));
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const ending of ["lf", "crlf", "cr"]) {
    test(`a stream with ${ending.toUpperCase()} line endings gives the whole reply`, async () => {
      const reply = await complete(
        { base_url: `${baseUrl}/${ending}`, model: "m", stream: true },
        undefined,
        [{ role: "user", content: "hi" }],
        [],
        AbortSignal.timeout(10_000),
      );
      assert.deepEqual(reply, {
        message: {
          role: "assistant",
          content: "hello",
          tool_calls: [{ id: "c1", type: "function", function: { name: "tool", arguments: "{}" } }],
        },
        tokens: 42,
      });
    });
  }
});
