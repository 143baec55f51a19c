/**
 * A stand-in embedding worker written from the protocol in docs/embeddings.md: it answers
 * `start` with `ready` for the identity in argv[2], then reads batches and never answers.
 */

import { encodeJsonFrame, JsonFrameReader } from "../../../src/store/embed/frames.ts";

const reader = new JsonFrameReader(1 << 24);
process.stdin.on("data", (chunk: Buffer) => {
  for (const event of reader.push(chunk)) {
    if (event.kind !== "frame") process.exit(3);
    const message = JSON.parse(event.payload.toString("utf8")) as { type: string };
    if (message.type === "start") {
      process.stdout.write(
        encodeJsonFrame({
          type: "ready",
          protocol: 1,
          identity: process.argv[2],
          dims: 16,
          max_tokens: 128,
          content_tokens: 30,
        }),
      );
    }
  }
});
