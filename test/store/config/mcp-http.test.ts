import assertModule from "node:assert";
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { child, decode } from "../../../src/common/decode/index.ts";
import { mcpHttpPolicy } from "../../../src/store/config/mcp-http.ts";
import type { McpHttpPolicy } from "../../../src/store/config/types.ts";
import { ABSENT, type Doc, type Expected, intRows, n, setAt } from "./rows.ts";

const MCP: Doc = {
  listen: "127.0.0.1:8090",
  allowed_origins: ["https://app.example", "http://127.0.0.1:3000"],
};
const MESSAGE = "service configuration is not valid: ";
const CODE = "mcp_http_config_invalid";
const ROOT = child(undefined, "mcp_http");

function accept(doc: unknown): McpHttpPolicy {
  const r = decode(mcpHttpPolicy, doc, ROOT);
  if (!r.ok) assert.fail(r.error.message);
  return r.value;
}

function refuse(doc: unknown, field: string, extra: Expected = {}) {
  const r = decode(mcpHttpPolicy, doc, ROOT);
  if (r.ok) assert.fail("expected a refusal");
  assert.equal(r.error.code, CODE, r.error.message);
  assert.equal(r.error.field, `mcp_http.${field}`, r.error.message);
  assert.ok(r.error.message.startsWith(`${MESSAGE}mcp_http.${field}: `), r.error.message);
  if (extra.kind) assert.equal(r.error.kind, extra.kind, r.error.message);
  if (extra.includes) assert.ok(r.error.message.includes(extra.includes), r.error.message);
}

describe("mcp_http policy: defaults", () => {
  test("a minimal object", () => {
    const p = accept(MCP);
    assert.deepEqual(p.listen, { host: "127.0.0.1", port: 8090 });
    assert.deepEqual([...p.allowed_origins], ["https://app.example", "http://127.0.0.1:3000"]);
    assert.equal(p.path, "/mcp");
    assert.equal(p.resource_metadata_url, null);
    assert.equal(p.max_connections, 64n);
    assert.equal(p.header_timeout_ms, 2000n);
    assert.equal(p.body_timeout_ms, 5000n);
  });
  test("an empty origin list is a valid policy (no browser origin)", () => {
    assert.equal(accept({ ...MCP, allowed_origins: [] }).allowed_origins.size, 0);
  });
  test("origins are a set", () => {
    const p = accept({ ...MCP, allowed_origins: ["https://a.example", "https://a.example"] });
    assert.equal(p.allowed_origins.size, 1);
  });
});

describe("mcp_http policy: integer fields", () => {
  const fields = [
    { path: ["max_connections"], type: "usize" as const, min: 1n, absent: 64n },
    { path: ["header_timeout_ms"], type: "ms" as const, min: 1n, absent: 2000n },
    { path: ["body_timeout_ms"], type: "ms" as const, min: 1n, absent: 5000n },
  ];
  for (const f of fields) {
    for (const row of intRows({ ...f, read: () => undefined })) {
      test(`${f.path[0]} = ${row.name}`, () => {
        const doc = setAt(MCP, f.path, row.value);
        if ("accept" in row.outcome) {
          assert.deepEqual(accept(doc)[f.path[0] as "max_connections"], row.outcome.accept);
        } else {
          refuse(doc, f.path[0]!, { kind: row.outcome.refuse.kind! });
          if (row.outcome.refuse.kind === "clock") {
            refuse(doc, f.path[0]!, { includes: "HTTP deadline is not representable" });
          }
        }
      });
    }
  }
});

const LISTEN = "listen must be a loopback address behind a TLS proxy";
const PATH = "path must be an absolute request path of plain segments";
const listens: [unknown, boolean][] = [
  ["127.0.0.1:8090", true],
  ["127.255.255.254:1", true],
  ["[::1]:8090", true],
  ["[0:0:0:0:0:0:0:1]:8090", true],
  ["0.0.0.0:8090", false],
  ["10.0.0.1:8090", false],
  ["[::]:8090", false],
  ["[::ffff:127.0.0.1]:8090", false],
  ["localhost:8090", false],
  ["127.0.0.1", false],
  ["127.0.0.1:", false],
  ["127.0.0.1:99999", false],
  ["127.0.0.1:-1", false],
  ["127.000.0.1:80", false],
  ["", false],
];
const origins: [string, string | null][] = [
  ["https://app.example", null],
  ["https://app.example:8443", null],
  ["https://xn--bcher-kva.example", null],
  ["http://127.0.0.1", null],
  ["http://127.0.0.1:3000", null],
  ["http://[::1]:3000", null],
  ["https://[::1]", null],
  ["http://app.example", "must use https"],
  ["http://localhost:3000", "must use https"],
  ["https://app.example/", "must not end with /"],
  ["https://app.example/path", "must not have a path"],
  ["https://app.example?q=1", "must not have a query"],
  ["https://app.example#frag", "must not have a fragment"],
  ["https://App.Example", "canonical form"],
  ["https://bücher.example", "canonical form"],
  ["https://app.example:443", "must omit the default port"],
  ["http://127.0.0.1:80", "must omit the default port"],
  ["https://user@app.example", "must not carry credentials"],
  ["app.example", "is not an origin"],
  ["null", "is not an origin"],
  ["ws://127.0.0.1:3000", "must use https"],
];
const paths: [unknown, boolean][] = [
  ["/mcp", true],
  ["/a", true],
  ["/v1/mcp-server_2.0", true],
  [`/${"a".repeat(255)}`, true],
  [`/${"a".repeat(256)}`, false],
  ["/", false],
  ["mcp", false],
  ["/mcp/", false],
  ["//mcp", false],
  ["/a//b", false],
  ["/a b", false],
  ["/a?b", false],
  ["/a%20b", false],
  ["/é", false],
  ["/a/../b", false],
  ["/./a", false],
];
const metadataUrls: [unknown, string | null][] = [
  ["https://auth.example/.well-known/oauth-protected-resource", null],
  ["https://auth.example/.well-known/oauth-protected-resource?resource=x", null],
  ["http://127.0.0.1:9000/.well-known/oauth-protected-resource", null],
  ["http://[::1]:9000/meta", null],
  [`https://a.example/${"x".repeat(2048 - 18)}`, null],
  [`https://a.example/${"x".repeat(2048 - 17)}`, "at most 2048 bytes"],
  ["http://auth.example/meta", "must use https"],
  ["ftp://auth.example/meta", "must use https"],
  ["https://user:pw@auth.example/meta", "credentials"],
  ["https://auth.example/meta#x", "fragment"],
  ['https://auth.example/"meta"', "quotes"],
  ["https://auth.example/a\\b", "quotes or backslashes"],
  ["https://auth.example/a b", "printable ASCII"],
  ["https://auth.example/\r\nX: y", "printable ASCII"],
  ["https://auth.example/é", "printable ASCII"],
  ["/relative/meta", "not an absolute URL"],
];

describe("mcp_http policy: field rules", () => {
  for (const [listen, ok] of listens) {
    test(`listen ${JSON.stringify(listen)}`, () => {
      const doc = { ...MCP, listen };
      if (ok) accept(doc);
      else refuse(doc, "listen", { kind: "shape", includes: LISTEN });
    });
  }
  for (const [origin, reason] of origins) {
    test(`allowed origin ${JSON.stringify(origin)}`, () => {
      const doc = { ...MCP, allowed_origins: ["https://ok.example", origin] };
      if (reason === null) assert.ok(accept(doc).allowed_origins.has(origin));
      else refuse(doc, "allowed_origins[1]", { kind: "shape", includes: reason });
    });
  }
  for (const [path, ok] of paths) {
    test(`path ${JSON.stringify(path)}`, () => {
      const doc = { ...MCP, path };
      if (ok) assert.equal(accept(doc).path, path);
      else refuse(doc, "path", { kind: "shape", includes: PATH });
    });
  }
  for (const [url, reason] of metadataUrls) {
    test(`resource_metadata_url ${JSON.stringify(url).slice(0, 60)}`, () => {
      const doc = { ...MCP, resource_metadata_url: url };
      if (reason === null) assert.equal(accept(doc).resource_metadata_url, url);
      else refuse(doc, "resource_metadata_url", { kind: "shape", includes: reason });
    });
  }
  const typed: [string, string, unknown, Expected["kind"]][] = [
    ["listen number", "listen", n(8090), "type"],
    ["listen null", "listen", null, "null"],
    ["listen absent", "listen", ABSENT, "missing"],
    ["allowed_origins absent", "allowed_origins", ABSENT, "missing"],
    ["allowed_origins null", "allowed_origins", null, "null"],
    ["allowed_origins object", "allowed_origins", {}, "type"],
    ["path null", "path", null, "null"],
    ["path number", "path", n(1), "type"],
    ["resource_metadata_url number", "resource_metadata_url", n(1), "type"],
    ["unknown field", "cors", true, "unknown"],
  ];
  for (const [name, field, value, kind] of typed) {
    test(name, () => refuse(setAt(MCP, [field], value), field, { kind: kind! }));
  }
  test("resource_metadata_url null is unset", () => {
    assert.equal(accept({ ...MCP, resource_metadata_url: null }).resource_metadata_url, null);
  });
  test("a refusal is one line even when the value holds a newline", () => {
    const r = decode(mcpHttpPolicy, { ...MCP, path: "/a\nb" }, ROOT);
    assertModule.ok(!r.ok && !r.error.message.includes("\n"));
  });
});
