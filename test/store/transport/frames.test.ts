import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { FrameReader, HEADER_BYTES } from "../../../src/store/transport/frames.ts";

function frameOf(payload: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(payload.length);
  return Buffer.concat([header, payload]);
}

function* chunksOf(data: Buffer, size: number): Generator<Buffer> {
  // Copies, as a socket hands over fresh buffers.
  for (let at = 0; at < data.length; at += size) yield Buffer.from(data.subarray(at, at + size));
}

describe("FrameReader", () => {
  test("a 16 MiB frame trickled in 64 KiB chunks is copied once, not once per chunk", () => {
    const payload = randomBytes(16 << 20);
    const reader = new FrameReader(32 << 20);
    const frames: Buffer[] = [];
    for (const chunk of chunksOf(frameOf(payload), 64 << 10)) {
      for (const event of reader.push(chunk)) {
        assert.equal(event.kind, "frame");
        if (event.kind === "frame") frames.push(event.payload);
      }
    }
    assert.equal(frames.length, 1);
    assert.ok(frames[0]!.equals(payload));
    // O(frame size): every byte is copied at most once (re-joining the buffer per chunk
    // would copy about 256 × 8 MiB).
    assert.ok(reader.copiedBytes <= payload.length + HEADER_BYTES, `${reader.copiedBytes}`);
    assert.equal(reader.partial, false);
  });

  test("frames split anywhere, even inside the header, come out whole and in order", () => {
    const payloads = [Buffer.from("a"), Buffer.alloc(0), randomBytes(700), Buffer.from("xyz")];
    const stream = Buffer.concat(payloads.map(frameOf));
    for (const size of [1, 2, 3, 5, 64, stream.length]) {
      const reader = new FrameReader(1024);
      const out: Buffer[] = [];
      for (const chunk of chunksOf(stream, size)) {
        for (const event of reader.push(chunk)) {
          if (event.kind === "frame") out.push(Buffer.from(event.payload));
        }
      }
      assert.deepEqual(out, payloads, `chunks of ${size}`);
      assert.equal(reader.partial, false);
    }
  });

  test("an oversized frame is reported from its header, before its body is buffered", () => {
    const reader = new FrameReader(100);
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32BE(1 << 20);
    assert.deepEqual([...reader.push(header)], [{ kind: "too_large", length: 1 << 20 }]);
    assert.equal(reader.copiedBytes, 0);
  });

  test("a limit lowered between frames applies to the frames after it in the same chunk", () => {
    const reader = new FrameReader(4096);
    const chunk = Buffer.concat([frameOf(Buffer.alloc(10)), frameOf(Buffer.alloc(1000))]);
    const kinds: string[] = [];
    for (const event of reader.push(chunk)) {
      kinds.push(event.kind);
      // What the server does on hello: the negotiated limit holds from the next frame on.
      reader.limit = 200;
    }
    assert.deepEqual(kinds, ["frame", "too_large"]);
  });
});
