/**
 * A query worker written from docs/queries.md alone, as a user would bring one: plain
 * JSON framing, no shared code with the shipped worker, and no sandbox: the query's code
 * is evaluated in this process, so it is for trusted test code only. It appends the number
 * of records of every batch it receives to the log file named by its first argument, so a
 * test can see how many records the store sent.
 */
import { appendFileSync } from "node:fs";
import { sendText, serve } from "./worker-frames.mjs";

const log = process.argv[2];
let query;

const send = (message) => sendText(JSON.stringify(message));

function handle(message) {
  if (message.type === "compile") {
    const fn = new Function(`return (${message.code}\n)`)();
    query = { fn, args: JSON.parse(message.args_json) };
    send({ type: "compiled", id: message.id });
  } else if (message.type === "end") send({ type: "ended", id: message.id });
  else if (message.type === "batch") {
    const records = message.records;
    appendFileSync(log, `${records.length}\n`);
    const rows = [];
    records.forEach((record, index) => {
      const out = query.fn(record, query.args);
      if (Array.isArray(out)) for (const o of out) rows.push([index, o]);
      else if (out !== undefined) rows.push([index, out]);
    });
    send({ type: "outputs", id: message.id, rows });
  }
}

serve("plain-worker test", handle);
