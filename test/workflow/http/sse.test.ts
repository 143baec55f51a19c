// The event-stream bounds (http/sse.ts) on a real Fastify listener and real sockets: the
// cap on open streams (a small cap given to the component; the server's is 1,000), the
// ping comment, the end of a stream at its maximum age, and the release of a stream's slot
// when its client goes away or the streams are closed. The server-level behaviour is in
// streams.test.ts against `skein serve`.

import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { silentLogger } from "../../../src/common/log.ts";
import { installErrorHandling } from "../../../src/workflow/http/errors.ts";
import { EventStreams } from "../../../src/workflow/http/sse.ts";
import { until } from "../../support/until.ts";

describe("event streams: bounds", () => {
  let app: FastifyInstance;
  let url: string;
  const streams = new EventStreams(silentLogger(), { max: 2, pingMs: 50, maxMs: 60_000 });
  const aging = new EventStreams(silentLogger(), { max: 10, pingMs: 60_000, maxMs: 300 });

  before(async () => {
    app = Fastify() as unknown as FastifyInstance;
    installErrorHandling(app);
    // A stream that sends one event, then waits until it must end.
    const route = (which: EventStreams) => async (_request: unknown, reply: FastifyReply) =>
      which.serve(reply, async (stream) => {
        await stream.send("hello", { n: 1 });
        await new Promise((done) => stream.signal.addEventListener("abort", done));
      });
    app.get("/stream", route(streams));
    app.get("/aging", route(aging));
    await app.listen({ host: "127.0.0.1", port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    streams.close();
    aging.close();
    await app.close();
  });

  /** Opens a stream and reads until `enough` says the text so far is enough. */
  async function open(path: string) {
    const controller = new AbortController();
    const response = await fetch(`${url}${path}`, { signal: controller.signal });
    let text = "";
    const done = (async () => {
      try {
        for await (const chunk of response.body!) text += Buffer.from(chunk).toString();
        return "ended";
      } catch {
        return "aborted";
      }
    })();
    return { response, text: () => text, done, abort: () => controller.abort() };
  }

  test("at most max streams: the next is 503 too_many_streams; an aborted client frees its slot", async () => {
    const a = await open("/stream");
    const b = await open("/stream");
    await until(
      "both streams open",
      () => a.text().includes("hello") && b.text().includes("hello"),
    );
    assert.equal(streams.open, 2);
    const refused = await fetch(`${url}/stream`);
    assert.equal(refused.status, 503);
    assert.equal(
      ((await refused.json()) as { error: { code: string } }).error.code,
      "too_many_streams",
    );
    a.abort();
    assert.equal(await a.done, "aborted");
    await until("the aborted stream's slot is free", () => streams.open === 1);
    const c = await open("/stream");
    assert.equal(c.response.status, 200);
    await until("a ping comment", () => c.text().includes(": ping\n\n"));
    assert.match(c.text(), /^event: hello\ndata: \{"n":1\}\n\n/);
    // Closing (the server stopping) ends every open stream cleanly.
    streams.close();
    assert.equal(await b.done, "ended");
    assert.equal(await c.done, "ended");
    assert.equal(streams.open, 0);
  });

  test("a stream ends at its maximum age (the client reconnects with after)", async () => {
    const s = await open("/aging");
    assert.equal(await s.done, "ended");
    assert.match(s.text(), /event: hello/);
    assert.equal(aging.open, 0);
  });
});
