import assert from "node:assert/strict";
import { hostname } from "node:os";
import { describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { parseConfig } from "../../../src/workflow/config/load.ts";
import { FIRST_RUN_TEMPLATE } from "../../../src/workflow/config/template.ts";

const FILE = "/etc/skein/skein.toml";

function refused(toml: string): SkeinError {
  try {
    parseConfig(toml, FILE);
  } catch (error) {
    assert.ok(error instanceof SkeinError);
    assert.equal(error.code, "config_invalid");
    return error;
  }
  return assert.fail(`accepted:\n${toml}`);
}

describe("workflow server configuration", () => {
  test("built-in defaults: the spec's keys keep the spec's defaults", () => {
    const c = parseConfig("", FILE);
    assert.equal(c.settings.namespaces.default, undefined, "namespaces.default: not set");
    assert.equal(c.settings.namespaces.auto_create, "open");
    assert.equal(c.settings.namespaces.max_in_flight_activities, 1024);
    assert.equal(c.settings.outbox.enabled, false);
    assert.equal(c.settings.deployments.enabled, false);
    assert.equal(c.settings.agents.transport, true);
    assert.deepEqual(c.settings.http.listen, { host: "127.0.0.1", port: 7380 });
    assert.deepEqual(c.settings.grpc.listen, { host: "127.0.0.1", port: 7381 });
    assert.equal(c.settings.http.max_body_bytes, 1048576);
    assert.equal(c.settings.cluster.shards, 16);
    assert.equal(c.nodeId, hostname());
    assert.equal(c.dataDir, "/etc/skein/skein-data");
    assert.deepEqual(c.storage, { kind: "sqlite", path: "/etc/skein/skein-data/skein.db" });
  });

  test("the first-run template decodes and turns on the outbox and deployments", () => {
    const c = parseConfig(FIRST_RUN_TEMPLATE, FILE);
    assert.equal(c.settings.outbox.enabled, true);
    assert.equal(c.settings.deployments.enabled, true);
    assert.equal(c.settings.namespaces.default, "default");
    assert.equal(c.settings.namespaces.max_in_flight_activities, 1024);
  });

  test("[mcp] is off by default, and the template shows it commented out", () => {
    const defaults = {
      enabled: false,
      path: "/mcp",
      allowed_origins: [],
      max_connections: 64,
      max_sessions: 256,
      session_idle_ms: 1_800_000,
    };
    assert.deepEqual(parseConfig("", FILE).settings.mcp, defaults);
    assert.deepEqual(parseConfig(FIRST_RUN_TEMPLATE, FILE).settings.mcp, defaults);
    const shown = FIRST_RUN_TEMPLATE.split("\n").filter(
      (l) =>
        l.startsWith("# [mcp]") ||
        /^# (enabled|path|allowed_origins|max_connections|max_sessions|session_idle_ms) = /.test(l),
    );
    const uncommented = shown.map((l) => l.slice(2)).join("\n");
    assert.deepEqual(parseConfig(uncommented, FILE).settings.mcp, {
      enabled: true,
      path: "/mcp",
      allowed_origins: ["https://console.example.com"],
      max_connections: 64,
      max_sessions: 256,
      session_idle_ms: 1_800_000,
    });
  });

  const accepted: [
    label: string,
    toml: string,
    check: (c: ReturnType<typeof parseConfig>) => void,
  ][] = [
    [
      "relative data_dir is under the file's directory",
      'data_dir = "d"',
      (c) => assert.equal(c.dataDir, "/etc/skein/d"),
    ],
    [
      "absolute data_dir",
      'data_dir = "/var/lib/skein"',
      (c) => assert.equal(c.dataDir, "/var/lib/skein"),
    ],
    [
      "relative sqlite path is under data_dir",
      '[storage]\nurl = "sqlite:x.db"',
      (c) => assert.deepEqual(c.storage, { kind: "sqlite", path: "/etc/skein/skein-data/x.db" }),
    ],
    [
      "absolute sqlite path",
      '[storage]\nurl = "sqlite:/srv/x.db"',
      (c) => assert.deepEqual(c.storage, { kind: "sqlite", path: "/srv/x.db" }),
    ],
    [
      "auto_create closed",
      '[namespaces]\nauto_create = "closed"',
      (c) => assert.equal(c.settings.namespaces.auto_create, "closed"),
    ],
    [
      "namespaces.default is trimmed",
      '[namespaces]\ndefault = " main "',
      (c) => assert.equal(c.settings.namespaces.default, "main"),
    ],
    [
      "IPv6 listen",
      '[http]\nlisten = "[::1]:0"',
      (c) => assert.deepEqual(c.settings.http.listen, { host: "::1", port: 0 }),
    ],
    [
      "max_in_flight_activities at u32 max",
      "[namespaces]\nmax_in_flight_activities = 4294967295",
      (c) => assert.equal(c.settings.namespaces.max_in_flight_activities, 4294967295),
    ],
    [
      "postgres storage with its schema",
      '[storage]\nurl = "postgres://u@db:5432/skein"\nschema = "tenant_1"',
      (c) =>
        assert.deepEqual(c.storage, {
          kind: "postgres",
          url: "postgres://u@db:5432/skein",
          schema: "tenant_1",
          poolSize: 10,
        }),
    ],
    [
      "storage.pool_size",
      '[storage]\nurl = "postgres://db/skein"\npool_size = 3',
      (c) => assert.equal(c.storage.kind === "postgres" && c.storage.poolSize, 3),
    ],
    [
      "postgresql:// scheme, default schema skein",
      '[storage]\nurl = "postgresql://db/skein"',
      (c) =>
        assert.deepEqual(c.storage, {
          kind: "postgres",
          url: "postgresql://db/skein",
          schema: "skein",
          poolSize: 10,
        }),
    ],
    ["node_id", '[cluster]\nnode_id = "n1"', (c) => assert.equal(c.nodeId, "n1")],
    [
      "an [mcp] section",
      '[mcp]\nenabled = true\npath = "/agents/mcp"\nallowed_origins = ["http://localhost:6274", "https://a.example"]\nmax_connections = 8\nmax_sessions = 3\nsession_idle_ms = 60000',
      (c) =>
        assert.deepEqual(c.settings.mcp, {
          enabled: true,
          path: "/agents/mcp",
          allowed_origins: ["http://localhost:6274", "https://a.example"],
          max_connections: 8,
          max_sessions: 3,
          session_idle_ms: 60_000,
        }),
    ],
  ];
  for (const [label, toml, check] of accepted) {
    test(`accepts ${label}`, () => check(parseConfig(toml, FILE)));
  }

  const refusals: [label: string, toml: string, message: string][] = [
    ["unknown top-level key", "colour = 1", "colour: unknown field"],
    ["unknown key in namespaces", "[namespaces]\nbogus = 1", "namespaces.bogus: unknown field"],
    ["unknown key in outbox", "[outbox]\nenable = true", "outbox.enable: unknown field"],
    [
      "float in an integer key",
      "[namespaces]\nmax_in_flight_activities = 1024.0",
      "namespaces.max_in_flight_activities: expected a whole number (positive u32), found 1024.0",
    ],
    ["fractional float", "[cluster]\nshards = 1.5", "cluster.shards: expected a whole number"],
    [
      "exponent float",
      "[http]\nmax_body_bytes = 1e3",
      "http.max_body_bytes: expected a whole number",
    ],
    [
      "zero ceiling",
      "[namespaces]\nmax_in_flight_activities = 0",
      "namespaces.max_in_flight_activities: must be between 1 and 4294967295, found 0",
    ],
    [
      "negative ceiling",
      "[namespaces]\nmax_in_flight_activities = -1",
      "namespaces.max_in_flight_activities: must not be negative",
    ],
    [
      "ceiling over u32",
      "[namespaces]\nmax_in_flight_activities = 4294967296",
      "namespaces.max_in_flight_activities: overflows u32",
    ],
    [
      "ceiling as a string",
      '[namespaces]\nmax_in_flight_activities = "1024"',
      "namespaces.max_in_flight_activities: expected positive u32, found string",
    ],
    [
      "auto_create other value",
      '[namespaces]\nauto_create = "Closed"',
      'namespaces.auto_create: must be one of "open", "closed", found "Closed"',
    ],
    [
      "outbox.enabled as a string",
      '[outbox]\nenabled = "true"',
      "outbox.enabled: expected boolean, found string",
    ],
    [
      "empty default namespace",
      '[namespaces]\ndefault = "  "',
      "namespaces.default: must not be empty",
    ],
    ["listen without a port", '[http]\nlisten = "localhost"', "http.listen: must be host:port"],
    [
      "listen port out of range",
      '[http]\nlisten = "127.0.0.1:70000"',
      "http.listen: port must be between 0 and 65535",
    ],
    [
      "other storage scheme",
      '[storage]\nurl = "mysql://db/skein"',
      "storage.url: must be sqlite:PATH or postgres://",
    ],
    ["storage.pool_size 0", "[storage]\npool_size = 0", "storage.pool_size"],
    ["storage.pool_size over 1000", "[storage]\npool_size = 1001", "storage.pool_size"],
    [
      "bad storage.schema",
      '[storage]\nschema = "Skein-1"',
      "storage.schema: must be a plain lower-case SQL identifier",
    ],
    ["a table given as a value", "outbox = true", "outbox: expected object, found boolean"],
    ["TOML syntax error", "[namespaces", "not valid TOML"],
    ["unknown key in mcp", "[mcp]\nsessions = true", "mcp.sessions: unknown field"],
    ["mcp.path without a slash", '[mcp]\npath = "mcp"', "mcp.path: must be an absolute path"],
    ["mcp.path ending in /", '[mcp]\npath = "/mcp/"', "mcp.path: must be an absolute path"],
    ["mcp.path with ..", '[mcp]\npath = "/a/.."', "mcp.path: must not have . or .. segments"],
    [
      "an origin with a path",
      '[mcp]\nallowed_origins = ["https://a.example/"]',
      'mcp.allowed_origins[0]: "https://a.example/" must not end with /',
    ],
    [
      "an origin not in canonical form",
      '[mcp]\nallowed_origins = ["https://A.example:443"]',
      'mcp.allowed_origins[0]: "https://A.example:443" must omit the default port',
    ],
    [
      "zero mcp connections",
      "[mcp]\nmax_connections = 0",
      "mcp.max_connections: must be between 1 and 1000000, found 0",
    ],
    [
      "zero mcp sessions",
      "[mcp]\nmax_sessions = 0",
      "mcp.max_sessions: must be between 1 and 100000, found 0",
    ],
    [
      "an mcp session idle expiry under a second",
      "[mcp]\nsession_idle_ms = 999",
      "mcp.session_idle_ms: must be between 1000 and 86400000, found 999",
    ],
  ];
  for (const [label, toml, message] of refusals) {
    test(`refuses ${label}`, () => {
      const error = refused(toml);
      assert.ok(error.message.startsWith(`${FILE}: `), error.message);
      assert.ok(error.message.includes(message), `${error.message}\n  should include\n${message}`);
    });
  }

  test("a key named __proto__ is refused as unknown, not merged", () => {
    assert.ok(
      refused('[namespaces]\n"__proto__" = 1').message.includes(
        "namespaces.__proto__: unknown field",
      ),
    );
  });
});
