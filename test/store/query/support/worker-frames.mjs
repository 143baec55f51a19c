/**
 * The framing of a query worker written from docs/queries.md alone (a 4-byte big-endian
 * length, then JSON text), shared by the test workers in this folder and by nothing else.
 */
let buffered = Buffer.alloc(0);

/** Writes one frame whose payload is `text`. */
export function sendText(text) {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length);
  process.stdout.write(Buffer.concat([header, payload]));
}

/** Says `ready` as `name`, then hands every message read from stdin to `handle`. */
export function serve(name, handle) {
  process.stdin.on("data", (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
      const length = buffered.readUInt32BE(0);
      handle(JSON.parse(buffered.toString("utf8", 4, 4 + length)));
      buffered = buffered.subarray(4 + length);
    }
  });
  process.stdin.on("end", () => process.exit(0));
  sendText(JSON.stringify({ type: "ready", protocol: 1, worker: name }));
}
