/**
 * A query worker that does not bound its outputs' nesting. With `args.depth`, it answers
 * every batch with one row per record whose output is objects nested that deep
 * (`{"a":{"a":…1…}}`), written as text, so no stringify of its own limits how deep it
 * goes; the store must refuse such outputs itself. Without it, it runs the code in this
 * process (trusted test code only: the start-up probe's).
 */
import { sendText as send, serve } from "./worker-frames.mjs";

let query;

function handle(message) {
  if (message.type === "compile") {
    const args = JSON.parse(message.args_json);
    query = { fn: new Function(`return (${message.code}\n)`)(), args };
    send(JSON.stringify({ type: "compiled", id: message.id }));
  } else if (message.type === "end") send(JSON.stringify({ type: "ended", id: message.id }));
  else if (message.type === "batch") {
    const depth = query.args?.depth;
    const rows = [];
    message.records.forEach((record, index) => {
      if (depth !== undefined)
        rows.push(`[${index},${'{"a":'.repeat(depth)}1${"}".repeat(depth)}]`);
      else
        for (const out of [query.fn(record, query.args)].flat()) {
          if (out !== undefined) rows.push(JSON.stringify([index, out]));
        }
    });
    send(`{"type":"outputs","id":${message.id},"rows":[${rows.join(",")}]}`);
  }
}

serve("deep-worker test", handle);
