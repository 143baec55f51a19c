import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import Fastify from "fastify";
import { createLogger, type Logger, lazyChildLogger } from "../../src/common/log.ts";

function capture() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean)));
  return { stream, lines };
}

test("logs are JSON lines with the logger's name", () => {
  const { stream, lines } = capture();
  const log = createLogger({ name: "skein", destination: stream, pretty: false });
  log.info({ run_id: "r1" }, "run started");
  const event = JSON.parse(lines[0]!);
  assert.equal(event.name, "skein");
  assert.equal(event.msg, "run started");
  assert.equal(event.run_id, "r1");
});

test("credential fields are redacted", () => {
  const { stream, lines } = capture();
  const log = createLogger({ name: "skein", destination: stream, pretty: false });
  log.info({ token: "eyJ-secret", request: { authorization: "Bearer eyJ-secret" } }, "x");
  assert.doesNotMatch(lines[0]!, /eyJ-secret/);
  assert.match(lines[0]!, /\[redacted\]/);
});

test("a request's lazily made child logger binds the request id, redacts, and levels apply", async () => {
  const { stream, lines } = capture();
  const logger = createLogger({ name: "skein", destination: stream, pretty: false });
  const app = Fastify({
    loggerInstance: logger,
    disableRequestLogging: true,
    childLoggerFactory: (parent, bindings, options) =>
      lazyChildLogger(parent as Logger, bindings, options as Record<string, unknown>),
  });
  app.get("/quiet", async () => "ok");
  app.get("/loud", async (request) => {
    request.log.debug("not at info");
    request.log.error({ token: "eyJ-secret" }, "boom");
    assert.equal(request.log.level, "info");
    request.log.child({ step: 2 }).warn("nested");
    return "ok";
  });
  await app.inject({ method: "GET", url: "/quiet" });
  assert.equal(lines.length, 0);
  await app.inject({ method: "GET", url: "/loud" });
  await app.close();
  assert.equal(lines.length, 2);
  const [boom, nested] = lines.map((l) => JSON.parse(l));
  assert.equal(boom.msg, "boom");
  assert.equal(boom.name, "skein");
  assert.equal(boom.token, "[redacted]");
  assert.ok(typeof boom.reqId === "string" && boom.reqId.length > 0);
  assert.equal(nested.msg, "nested");
  assert.equal(nested.reqId, boom.reqId);
  assert.equal(nested.step, 2);
});
