/**
 * A stand-in embedding worker written from the protocol in docs/embeddings.md, for the
 * question batching tests: 16-dimension vectors made from each text's characters. It
 * appends one JSON line per `embed` message (`{kind, texts}`) to `received.jsonl` in its
 * model directory as the message arrives and to `requests.jsonl` as it takes it (one at a
 * time, in order), and holds its answer to the first question request until a file
 * `release` appears there, so the test decides when that batch ends.
 */

import { appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { encodeJsonFrame, JsonFrameReader } from "../../../src/store/embed/frames.ts";

const DIMS = 16;
const dir = process.env.SKEIN_EMBED_MODEL_DIR ?? "";
const reader = new JsonFrameReader(1 << 24);
let held = false;
let queue = Promise.resolve();

function vector(text: string): string {
  const v = new Float32Array(DIMS);
  for (let i = 0; i < text.length; i++) v[i % DIMS]! += text.charCodeAt(i);
  const norm = Math.hypot(...v) || 1;
  return Buffer.from(v.map((x) => x / norm).buffer).toString("base64");
}

function released(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (!existsSync(join(dir, "release"))) return;
      clearInterval(timer);
      resolve();
    }, 10);
  });
}

async function answer(message: { id: number; kind: string; texts: string[] }): Promise<void> {
  appendFileSync(
    join(dir, "requests.jsonl"),
    `${JSON.stringify({ kind: message.kind, texts: message.texts.length })}\n`,
  );
  if (message.kind === "question" && !held) {
    held = true;
    await released();
  }
  const items = message.texts.map((t) => ({ kind: "vectors", windows: 1, data: vector(t) }));
  process.stdout.write(encodeJsonFrame({ type: "vectors", id: message.id, items }));
}

process.stdin.on("data", (chunk: Buffer) => {
  for (const event of reader.push(chunk)) {
    if (event.kind !== "frame") process.exit(3);
    const message = JSON.parse(event.payload.toString("utf8"));
    if (message.type === "start") {
      process.stdout.write(
        encodeJsonFrame({
          type: "ready",
          protocol: 1,
          identity: process.argv[2],
          dims: DIMS,
          max_tokens: 128,
          content_tokens: 126,
        }),
      );
    } else {
      appendFileSync(
        join(dir, "received.jsonl"),
        `${JSON.stringify({ kind: message.kind, texts: message.texts.length })}\n`,
      );
      // In order, one at a time, as the shipped worker answers.
      queue = queue.then(() => answer(message));
    }
  }
});
process.stdin.on("end", () => process.exit(0));
