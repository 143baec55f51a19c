import assert from "node:assert/strict";
import { createConnection, type Socket } from "node:net";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { decodePayload, encodeFrame, FrameReader } from "../../../src/store/transport/frames.ts";
import { until } from "../../support/until.ts";
import { servedStore } from "./fixture.ts";

/**
 * timeout_ms where a test is about it. A hello sent at once must still beat it on a loaded
 * machine, so it is not a few hundred ms; the other rules are tested with the default.
 */
const TIMEOUT_MS = 1500;

/** A raw socket speaking frames by hand, to send what StoreClient never would. */
async function raw(path: string) {
  const socket: Socket = createConnection(path);
  await new Promise((resolve) => socket.once("connect", resolve));
  const reader = new FrameReader(1 << 30);
  const frames: unknown[] = [];
  let count = 0;
  const waiters: (() => void)[] = [];
  socket.on("data", (chunk: Buffer) => {
    for (const e of reader.push(chunk))
      if (e.kind === "frame") {
        count++;
        frames.push(decodePayload(e.payload));
      }
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  socket.on("error", () => {});
  return {
    socket,
    closed,
    received: () => count,
    async next(): Promise<unknown> {
      while (frames.length === 0) await new Promise<void>((r) => waiters.push(r));
      return frames.shift();
    },
  };
}

const refusalOf = (frame: unknown) => (frame as { error: { code: string } }).error.code;

describe("connection rules", async () => {
  const served = await servedStore({ maxClients: 2, maxFrame: 4096 });

  test("max_frame is the smaller of both sides", async () => {
    const small = await served.connect({ maxFrame: 1000 });
    assert.equal(small.hello?.max_frame, 1000);
    const large = await served.connect({ maxFrame: 1 << 20 });
    assert.equal(large.hello?.max_frame, 4096);
    await small.close();
    await large.close();
  });

  test("max_clients: an excess client is refused at run time", async () => {
    const a = await served.connect();
    const b = await served.connect();
    await assert.rejects(
      served.connect(),
      (e: unknown) => e instanceof SkeinError && e.code === "max_clients",
    );
    await a.close();
    // A freed place (once the server has seen the close) admits the next client.
    await until("the server to free a's place", () => served.server.clients < 2);
    const c = await served.connect();
    await b.close();
    await c.close();
  });

  test("a frame above max_frame closes the connection with frame_too_large", async () => {
    const client = await served.connect();
    await assert.rejects(
      client.call("document.put", { collection: "x", key: "k", value: "v".repeat(5000) }),
      (e: unknown) => e instanceof SkeinError && e.code === "frame_too_large",
    );
    await client.close();
  });

  test("an answer above max_frame is refused with frame_too_large for that request", async () => {
    const client = await served.connect({ maxFrame: 600 });
    await client.call("collections.create", { collection: "wide" });
    for (let i = 0; i < 4; i++) {
      await client.call("document.put", {
        collection: "wide",
        key: `k${i}`,
        value: "w".repeat(200),
      });
    }
    await assert.rejects(
      client.call("document.list", { collection: "wide" }),
      (e: unknown) => e instanceof SkeinError && e.code === "frame_too_large",
    );
    // The connection stays usable.
    assert.equal((await client.get("wide", "k0")).found, true);
    await client.close();
  });

  test("many requests in flight on one connection are answered by id", async () => {
    const client = await served.connect();
    await client.call("collections.create", { collection: "many" });
    const puts = [];
    for (let i = 0; i < 50; i++) puts.push(client.put("many", [{ key: `k${i}`, value: i }]));
    const receipts = await Promise.all(puts);
    assert.equal(new Set(receipts.map((r) => r.version)).size, 50);
    const gets = await Promise.all(
      Array.from({ length: 50 }, (_, i) => client.get("many", `k${i}`)),
    );
    assert.deepEqual(
      gets.map((g) => g.value),
      Array.from({ length: 50 }, (_, i) => i),
    );
    await client.close();
  });

  test("the first frame must be hello", async () => {
    const r = await raw(served.socketPath);
    r.socket.write(encodeFrame({ id: 1, verb: "collections.list", args: {} }));
    assert.equal(refusalOf(await r.next()), "hello_required");
    await r.closed;
  });

  test("frames in the same chunk as hello are held to the negotiated max_frame", async () => {
    const r = await raw(served.socketPath);
    const hello = encodeFrame({ id: 1, verb: "hello", args: { max_frame: 200 } });
    // Below the server's own max_frame (4096), above the 200 this client negotiates.
    const put = encodeFrame({
      id: 2,
      verb: "document.put",
      args: { collection: "x", key: "k", value: "v".repeat(1000) },
    });
    r.socket.write(Buffer.concat([hello, put]));
    assert.equal(((await r.next()) as { ok: boolean }).ok, true);
    assert.equal(refusalOf(await r.next()), "frame_too_large");
    await r.closed;
  });

  test("a payload that is not a request is malformed_frame", async () => {
    const r = await raw(served.socketPath);
    r.socket.write(encodeFrame("just a string"));
    assert.equal(refusalOf(await r.next()), "malformed_frame");
    await r.closed;
  });
});

describe("connection rules: timeout_ms", async () => {
  const served = await servedStore({ maxFrame: 4096, timeoutMs: TIMEOUT_MS });

  test("timeout_ms: no hello in time closes with timeout", async () => {
    const r = await raw(served.socketPath);
    assert.equal(refusalOf(await r.next()), "timeout");
    await r.closed;
  });

  test("timeout_ms: a frame begun and not finished in time closes with timeout", async () => {
    const r = await raw(served.socketPath);
    r.socket.write(encodeFrame({ id: 1, verb: "hello", args: { max_frame: 4096 } }));
    assert.equal(((await r.next()) as { ok: boolean }).ok, true);
    const frame = encodeFrame({ id: 2, verb: "collections.list", args: {} });
    r.socket.write(frame.subarray(0, 6));
    assert.equal(refusalOf(await r.next()), "timeout");
    await r.closed;
  });

  test("an idle connection after hello is not timed out", async () => {
    const client = await served.connect();
    // Idle for longer than timeout_ms (a loaded machine only makes it longer).
    await new Promise((r) => setTimeout(r, TIMEOUT_MS * 1.5));
    assert.ok(Array.isArray(((await client.call("collections.list")) as { rows: unknown[] }).rows));
    await client.close();
  });
});

describe("connection loss", async () => {
  test("calls in flight when the server goes away fail with connection_closed", async () => {
    const served = await servedStore();
    const client = await served.connect();
    await served.server.close();
    await assert.rejects(
      client.call("collections.list"),
      (e: unknown) => e instanceof SkeinError && e.code === "connection_closed",
    );
  });
});

describe("a client that stops reading", async () => {
  test("is disconnected once its answers wait longer than timeout_ms", {
    timeout: 20_000,
  }, async () => {
    const served = await servedStore({ timeoutMs: TIMEOUT_MS });
    const writer = await served.connect();
    await writer.call("collections.create", { collection: "fat" });
    const records = [];
    for (let i = 0; i < 100; i++) records.push({ key: `k${i}`, value: "f".repeat(1000) });
    await writer.put("fat", records);
    const r = await raw(served.socketPath);
    r.socket.write(encodeFrame({ id: 1, verb: "hello", args: { max_frame: 1 << 20 } }));
    await r.next();
    // Stop reading, then ask for far more than the socket buffers hold.
    r.socket.pause();
    for (let i = 0; i < 200; i++) {
      r.socket.write(
        encodeFrame({ id: 2 + i, verb: "document.list", args: { collection: "fat" } }),
      );
    }
    // The server gives up on the reader (its answers waited timeout_ms): only the writer is left.
    await until("the server to drop the reader", () => served.server.clients === 1, {
      timeoutMs: 15_000,
    });
    // Reading again drains what was sent before the server gave up, then the close.
    r.socket.resume();
    await r.closed;
    assert.ok(r.received() < 201, `${r.received()} frames arrived`);
  });
});
