/**
 * An embedding worker for `bench:search`, written from the worker protocol in
 * docs/embeddings.md: it answers each text with the synthetic clustered vector the text
 * names (clustered-vectors.ts), so documents and questions share one distribution and
 * nothing but the protocol's own cost is measured on the worker side.
 */

import { encodeJsonFrame, JsonFrameReader } from "../../src/store/embed/frames.ts";
import { DIMS, vectorOf } from "./clustered-vectors.ts";

export const CLUSTERED_IDENTITY = "c".repeat(64);

const reader = new JsonFrameReader(1 << 26);
process.stdin.on("data", (chunk: Buffer) => {
  for (const event of reader.push(chunk)) {
    if (event.kind !== "frame") process.exit(3);
    const message = JSON.parse(event.payload.toString("utf8")) as {
      type: string;
      id?: number;
      texts?: string[];
    };
    if (message.type === "start") {
      process.stdout.write(
        encodeJsonFrame({
          type: "ready",
          protocol: 1,
          identity: CLUSTERED_IDENTITY,
          dims: DIMS,
          max_tokens: 512,
          content_tokens: 510,
        }),
      );
    } else if (message.type === "embed") {
      const items = (message.texts ?? []).map((text) => {
        const v = vectorOf(text);
        return {
          kind: "vectors",
          windows: 1,
          data: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64"),
        };
      });
      process.stdout.write(encodeJsonFrame({ type: "vectors", id: message.id, items }));
    }
  }
});
