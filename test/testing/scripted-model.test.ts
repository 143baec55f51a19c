// The scripted model server speaks chat completions: plain JSON and server-sent event
// streams, text and tool calls, in script order, keeping every request.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type ScriptedModel, startScriptedModel } from "../../src/testing/scripted-model.ts";

let model: ScriptedModel;
before(async () => {
  model = await startScriptedModel([
    { content: "hello there", tokens: 7 },
    { tool_calls: [{ id: "c1", name: "lookup", arguments: '{"q":"x"}' }] },
    { content: "streamed text" },
  ]);
});
after(() => model.close());

// biome-ignore lint/suspicious/noExplicitAny: the test reads the reply shapes it asserts
const json = async (r: Response): Promise<any> => r.json();

const ask = (body: object) =>
  fetch(`${model.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], ...body }),
  });

test("replies in order, plain and streamed, and records the requests", async () => {
  const first = await json(await ask({}));
  assert.equal(first.choices[0].message.content, "hello there");
  assert.equal(first.choices[0].finish_reason, "stop");
  assert.equal(first.usage.total_tokens, 7);

  const second = await json(await ask({}));
  assert.deepEqual(second.choices[0].message.tool_calls, [
    { id: "c1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
  ]);
  assert.equal(second.choices[0].finish_reason, "tool_calls");

  const stream = await ask({ stream: true });
  assert.equal(stream.headers.get("content-type"), "text/event-stream");
  const events = (await stream.text()).split("\n\n").filter((e) => e.startsWith("data: "));
  assert.equal(events.at(-1), "data: [DONE]");
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
  assert.equal(chunks.map((c) => c.choices[0].delta.content ?? "").join(""), "streamed text");
  assert.equal(chunks.at(-1).choices[0].finish_reason, "stop");

  assert.equal(model.requests.length, 3);
  assert.equal(model.requests[2]!.stream, true);
  // Past the script: a 500 with a message.
  assert.equal((await ask({})).status, 500);
});
