/**
 * A query worker written from docs/queries.md alone, as a user would bring one: plain
 * JSON framing, no shared code with the shipped worker, and no sandbox: the query's code
 * is evaluated in this process, so it is for trusted test code only. It appends the number
 * of records of every batch it receives to the log file named by its first argument, so a
 * test can see how many records the store sent.
 */
import { appendFileSync } from "node:fs";

const log = process.argv[2];
let buffered = Buffer.alloc(0);
let query;

function send(message) {
  const payload = Buffer.from(JSON.stringify(message));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length);
  process.stdout.write(Buffer.concat([header, payload]));
}

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

process.stdin.on("data", (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
    const length = buffered.readUInt32BE(0);
    handle(JSON.parse(buffered.toString("utf8", 4, 4 + length)));
    buffered = buffered.subarray(4 + length);
  }
});
process.stdin.on("end", () => process.exit(0));
send({ type: "ready", protocol: 1, worker: "plain-worker test" });
