/**
 * Integers of every MessagePack width in store values, as a non-JS client sends them:
 * hand-encoded uint 64 (0xcf) and int 64 (0xd3) bytes inside otherwise ordinary request
 * frames. Each is stored and read back as the same integer in the same bytes, within and
 * beyond 2^53; an integer is one value whatever width it was sent in (same leaf, no
 * change in a diff).
 */

import assert from "node:assert/strict";
import { createConnection, type Socket } from "node:net";
import { describe, test } from "node:test";
import { Packr } from "msgpackr";
import { FrameReader } from "../../../src/store/transport/frames.ts";
import { servedStore } from "./fixture.ts";

const packr = new Packr({ useRecords: false, mapsAsObjects: true });
const MARK = "\u0001integer-goes-here\u0001";

/** A request frame whose `value` (wherever MARK stands) is the raw bytes given. */
function frameWith(message: object, raw: Buffer): Buffer {
  const packed = packr.pack(message);
  const mark = packr.pack(MARK);
  const at = packed.indexOf(mark);
  assert.ok(at >= 0);
  const payload = Buffer.concat([packed.subarray(0, at), raw, packed.subarray(at + mark.length)]);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length);
  return Buffer.concat([header, payload]);
}

const u64 = (n: bigint) =>
  Buffer.concat([Buffer.from([0xcf]), bytes8((b) => b.writeBigUInt64BE(n))]);
const i64 = (n: bigint) =>
  Buffer.concat([Buffer.from([0xd3]), bytes8((b) => b.writeBigInt64BE(n))]);
function bytes8(write: (b: Buffer) => void): Buffer {
  const b = Buffer.alloc(8);
  write(b);
  return b;
}

/** A raw connection that has said hello; `call` sends a frame and resolves its answer's payload. */
async function rawClient(path: string) {
  const socket: Socket = createConnection(path);
  await new Promise((resolve) => socket.once("connect", resolve));
  const reader = new FrameReader(1 << 24);
  const waiting: ((payload: Buffer) => void)[] = [];
  socket.on("data", (chunk: Buffer) => {
    for (const event of reader.push(chunk)) {
      if (event.kind === "frame") waiting.shift()?.(Buffer.from(event.payload));
    }
  });
  const call = (frame: Buffer) =>
    new Promise<Buffer>((resolve) => {
      waiting.push(resolve);
      socket.write(frame);
    });
  return { socket, call, decode: (payload: Buffer) => packr.unpack(payload) as Answer };
}

interface Answer {
  readonly ok: boolean;
  readonly result?: { value?: unknown; rows?: unknown[]; changes?: unknown[]; version?: number };
  readonly error?: { code: string; message: string };
}

describe("64-bit MessagePack integers in values", async () => {
  const served = await servedStore();
  const r = await rawClient(served.socketPath);
  const hello = packr.pack({ id: 1, verb: "hello", args: { max_frame: 1 << 20 } });
  const header = Buffer.alloc(4);
  header.writeUInt32BE(hello.length);
  assert.equal(r.decode(await r.call(Buffer.concat([header, hello]))).ok, true);
  let nextId = 2;
  const request = async (verb: string, args: object, raw?: Buffer) => {
    const id = nextId++;
    const frame =
      raw === undefined
        ? (() => {
            const p = packr.pack({ id, verb, args });
            const h = Buffer.alloc(4);
            h.writeUInt32BE(p.length);
            return Buffer.concat([h, p]);
          })()
        : frameWith({ id, verb, args }, raw);
    return r.call(frame);
  };
  assert.equal(r.decode(await request("collections.create", { collection: "n" })).ok, true);

  const cases: [string, Buffer][] = [
    ["a millisecond timestamp as uint 64", u64(1_700_000_000_123n)],
    ["-2^40 as int 64", i64(-(2n ** 40n))],
    ["2^53 as uint 64", u64(2n ** 53n)],
    ["2^53 + 1 as uint 64", u64(2n ** 53n + 1n)],
    ["2^63 + 5 as uint 64", u64(2n ** 63n + 5n)],
    ["2^64 - 1 as uint 64", u64(2n ** 64n - 1n)],
    ["-(2^53 + 1) as int 64", i64(-(2n ** 53n) - 1n)],
    ["-2^63 as int 64", i64(-(2n ** 63n))],
  ];
  for (const [name, raw] of cases) {
    test(`${name}: put, then get, list and changes answer the same bytes`, async () => {
      const key = `k-${nextId}`;
      const put = r.decode(
        await request("document.put", { collection: "n", key, value: MARK }, raw),
      );
      assert.equal(put.ok, true, JSON.stringify(put.error));
      const get = await request("document.get", { collection: "n", key });
      assert.equal(r.decode(get).ok, true);
      assert.ok(get.includes(raw), `document.get answers ${get.toString("hex")}`);
      // Nested in an object and an array too.
      const nestedKey = `${key}-nested`;
      const nested = r.decode(
        await request(
          "document.put",
          { collection: "n", key: nestedKey, value: { at: [1, MARK] } },
          raw,
        ),
      );
      assert.equal(nested.ok, true, JSON.stringify(nested.error));
      const list = await request("document.list", { collection: "n", prefix: nestedKey });
      assert.ok(list.includes(raw), "document.list answers the same bytes");
      const changes = await request("changes.list", {
        collection: "n",
        from: (put.result as { version: number }).version,
      });
      assert.ok(changes.includes(raw), "changes.list answers the same bytes");
    });
  }

  test("an integer is one value whatever width it was sent in", async () => {
    const first = r.decode(
      await request(
        "document.put",
        { collection: "n", key: "same", value: { t: MARK } },
        u64(1_700_000_000_123n),
      ),
    );
    // The same integer as float 64, then as int 64: the same leaf, so no change.
    const float = Buffer.alloc(9);
    float[0] = 0xcb;
    float.writeDoubleBE(1_700_000_000_123, 1);
    await request("document.put", { collection: "n", key: "same", value: { t: MARK } }, float);
    const last = r.decode(
      await request(
        "document.put",
        { collection: "n", key: "same", value: { t: MARK } },
        i64(1_700_000_000_123n),
      ),
    );
    const changes = r.decode(
      await request("changes.list", {
        collection: "n",
        from: (first.result as { version: number }).version,
        to: (last.result as { version: number }).version,
      }),
    );
    assert.deepEqual(changes.result?.changes, []);
  });

  test("StoreClient (JS): numbers up to 2^53 come back as numbers, larger integers as bigint", async () => {
    const client = await served.connect();
    const value = {
      ms: 1_700_000_000_123,
      small: 7,
      neg: -(2 ** 40),
      big: 2n ** 60n,
      huge: 2n ** 64n - 1n,
      float: 2 ** 60,
    };
    await client.put("n", [{ key: "js", value }]);
    assert.deepEqual((await client.get("n", "js")).value, value);
  });
});
