import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { createLogger } from "../../src/common/log.ts";

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
