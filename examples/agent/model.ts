/**
 * The example's model: the scripted OpenAI-compatible server on 127.0.0.1:8765 with a short
 * script (a tool call that needs approval, then a final answer, each after two seconds so
 * there is time to intervene). Run with `npx node examples/agent/model.ts`; it prints its
 * base URL and every request's last message as the agent sends it.
 */

import { startScriptedModel } from "../../src/testing/scripted-model.ts";

const model = await startScriptedModel(
  [
    {
      tool_calls: [{ id: "call-1", name: "lookup", arguments: '{"word":"skein"}' }],
      delay_ms: 2_000,
    },
    { content: "A skein is a length of yarn, loosely coiled.", delay_ms: 2_000 },
  ],
  8765,
);
process.stdout.write(`scripted model at ${model.url}\n`);
let seen = 0;
setInterval(() => {
  for (const request of model.requests.slice(seen)) {
    const last = request.messages.at(-1);
    process.stdout.write(`request ${++seen}: ${last?.role}: ${JSON.stringify(last?.content)}\n`);
  }
}, 200);
process.once("SIGINT", () => model.close().then(() => process.exit(0)));
