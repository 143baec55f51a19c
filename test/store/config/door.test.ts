import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { doorFile } from "../../../src/store/config/door.ts";
import type { DoorConfig } from "../../../src/store/config/types.ts";
import { ABSENT, accept, type Doc, type Expected, intRows, n, refusal, setAt } from "./rows.ts";

const DOOR: Doc = {
  listen: "127.0.0.1:8080",
  origin: "https://console.example",
  files: "/srv/skein/console",
  stores: { main: "/run/skein/main.sock", "team-b_2": "/run/skein/b.sock" },
  idp: {
    issuer: "https://idp.example/realms/skein",
    client_id: "skein-console",
    secret_file: "/etc/skein/door.secret",
    redirect: "https://console.example/callback",
  },
};
const MESSAGE = "the door configuration is not valid: ";
const CODE = "door_config_invalid";

const refuse = (field: string, extra: Expected = {}): Expected => ({
  code: CODE,
  field,
  prefix: `${MESSAGE}${field}: `,
  ...extra,
});

describe("door file: a complete file decodes", () => {
  test("with defaults", () => {
    const door = accept(doorFile, DOOR);
    assert.deepEqual(door.listen, { host: "127.0.0.1", port: 8080 });
    assert.equal(door.timeout_ms, 30000n);
    assert.equal(door.max_connections, 64n);
    assert.deepEqual([...door.stores.keys()], ["main", "team-b_2"]);
  });
});

describe("door file: integer fields", () => {
  const fields = [
    {
      path: ["timeout_ms"],
      type: "ms" as const,
      min: 1n,
      absent: 30000n,
      read: (d: DoorConfig) => d.timeout_ms,
    },
    {
      path: ["max_connections"],
      type: "usize" as const,
      min: 1n,
      absent: 64n,
      read: (d: DoorConfig) => d.max_connections,
    },
  ];
  for (const f of fields) {
    for (const row of intRows({ ...f, code: CODE, prefix: `${MESSAGE}${f.path[0]}: ` })) {
      test(`${f.path[0]} = ${row.name}`, () => {
        const doc = setAt(DOOR, f.path, row.value);
        if ("accept" in row.outcome)
          assert.deepEqual(f.read(accept(doorFile, doc)), row.outcome.accept);
        else refusal(doorFile, doc, row.outcome.refuse);
      });
    }
  }
});

type Row = [name: string, path: string[], value: unknown, outcome: Expected | "ok"];

const LISTEN_RULE = "listen must be a loopback address behind a TLS proxy";
const ORIGIN_RULE = "origin must be an https origin with no path";

const rows: Row[] = [
  // listen
  ["listen 127.0.0.1:8080", ["listen"], "127.0.0.1:8080", "ok"],
  ["listen 127.1.2.3:1", ["listen"], "127.1.2.3:1", "ok"],
  ["listen [::1]:8080", ["listen"], "[::1]:8080", "ok"],
  ["listen port 0", ["listen"], "127.0.0.1:0", "ok"],
  ["listen port 65535", ["listen"], "127.0.0.1:65535", "ok"],
  [
    "listen 0.0.0.0",
    ["listen"],
    "0.0.0.0:8080",
    refuse("listen", { kind: "shape", includes: LISTEN_RULE }),
  ],
  ["listen public IPv4", ["listen"], "192.0.2.1:8080", refuse("listen", { includes: LISTEN_RULE })],
  ["listen [::]", ["listen"], "[::]:8080", refuse("listen", { includes: LISTEN_RULE })],
  ["listen localhost", ["listen"], "localhost:8080", refuse("listen", { includes: LISTEN_RULE })],
  ["listen without port", ["listen"], "127.0.0.1", refuse("listen", { includes: LISTEN_RULE })],
  ["listen port 65536", ["listen"], "127.0.0.1:65536", refuse("listen", { includes: LISTEN_RULE })],
  ["listen port 08080", ["listen"], "127.0.0.1:08080", refuse("listen", { includes: LISTEN_RULE })],
  [
    "listen IPv6 without brackets",
    ["listen"],
    "::1:8080",
    refuse("listen", { includes: LISTEN_RULE }),
  ],
  ["listen number", ["listen"], n(8080), refuse("listen", { kind: "type" })],
  ["listen absent", ["listen"], ABSENT, refuse("listen", { kind: "missing" })],
  // origin
  [
    "origin http",
    ["origin"],
    "http://console.example",
    refuse("origin", { includes: ORIGIN_RULE }),
  ],
  [
    "origin trailing slash",
    ["origin"],
    "https://console.example/",
    refuse("origin", { includes: ORIGIN_RULE }),
  ],
  [
    "origin path",
    ["origin"],
    "https://console.example/app",
    refuse("origin", { includes: ORIGIN_RULE }),
  ],
  [
    "origin query",
    ["origin"],
    "https://console.example?x",
    refuse("origin", { includes: ORIGIN_RULE }),
  ],
  [
    "origin uppercase host",
    ["origin"],
    "https://Console.example",
    refuse("origin", { includes: ORIGIN_RULE }),
  ],
  [
    "origin default port",
    ["origin"],
    "https://console.example:443",
    refuse("origin", { includes: ORIGIN_RULE }),
  ],
  [
    "origin credentials",
    ["origin"],
    "https://u@console.example",
    refuse("origin", { includes: ORIGIN_RULE }),
  ],
  ["origin not a URL", ["origin"], "console.example", refuse("origin", { includes: ORIGIN_RULE })],
  ["origin null", ["origin"], null, refuse("origin", { kind: "null" })],
  // files
  [
    "files relative",
    ["files"],
    "console",
    refuse("files", { includes: "files must be an absolute folder" }),
  ],
  ["files absent", ["files"], ABSENT, refuse("files", { kind: "missing" })],
  // stores
  [
    "stores empty",
    ["stores"],
    {},
    refuse("stores", { kind: "shape", includes: "must not be empty" }),
  ],
  ["stores array", ["stores"], [], refuse("stores", { kind: "type" })],
  ["stores absent", ["stores"], ABSENT, refuse("stores", { kind: "missing" })],
  [
    "stores name with space",
    ["stores"],
    { "a b": "/s" },
    refuse('stores."a b"', { includes: "ASCII letters, digits, - or _" }),
  ],
  ["stores name with dot", ["stores"], { "a.b": "/s" }, refuse('stores."a.b"')],
  ["stores name non-ASCII", ["stores"], { é: "/s" }, refuse('stores."é"')],
  ["stores empty name", ["stores"], { "": "/s" }, refuse('stores.""')],
  [
    "stores relative socket",
    ["stores"],
    { main: "main.sock" },
    refuse("stores.main", { includes: "socket must be an absolute path" }),
  ],
  ["stores socket number", ["stores"], { main: n(1) }, refuse("stores.main", { kind: "type" })],
  ["stores __proto__ is just a name", ["stores"], JSON.parse('{"__proto__":"/s"}'), "ok"],
  // idp
  ["idp absent", ["idp"], ABSENT, refuse("idp", { kind: "missing" })],
  ["idp null", ["idp"], null, refuse("idp", { kind: "null" })],
  ["idp unknown field", ["idp", "scope"], "openid", refuse("idp.scope", { kind: "unknown" })],
  ["idp issuer http", ["idp", "issuer"], "http://127.0.0.1:9000/realms/x", "ok"],
  [
    "idp issuer not an address",
    ["idp", "issuer"],
    "not a url",
    refuse("idp.issuer", { includes: "idp issuer is not an address" }),
  ],
  [
    "idp issuer ftp",
    ["idp", "issuer"],
    "ftp://idp.example",
    refuse("idp.issuer", { includes: "idp issuer must be an http or https address" }),
  ],
  ["idp issuer absent", ["idp", "issuer"], ABSENT, refuse("idp.issuer", { kind: "missing" })],
  [
    "client_id empty",
    ["idp", "client_id"],
    "",
    refuse("idp.client_id", { includes: "client_id must be a name with no control character" }),
  ],
  [
    "client_id tab",
    ["idp", "client_id"],
    "a\tb",
    refuse("idp.client_id", { includes: "client_id must be a name with no control character" }),
  ],
  ["client_id DEL", ["idp", "client_id"], "a\u007f", refuse("idp.client_id")],
  ["client_id C1 control", ["idp", "client_id"], "a\u0085", refuse("idp.client_id")],
  ["client_id with space and unicode", ["idp", "client_id"], "skein console é", "ok"],
  ["client_id absent", ["idp", "client_id"], ABSENT, refuse("idp.client_id", { kind: "missing" })],
  [
    "secret_file relative",
    ["idp", "secret_file"],
    "door.secret",
    refuse("idp.secret_file", { includes: "secret_file must be an absolute path" }),
  ],
  [
    "secret_file absent",
    ["idp", "secret_file"],
    ABSENT,
    refuse("idp.secret_file", { kind: "missing" }),
  ],
  [
    "redirect other path",
    ["idp", "redirect"],
    "https://console.example/cb",
    refuse("idp.redirect", { kind: "rule", includes: "/callback" }),
  ],
  [
    "redirect trailing slash",
    ["idp", "redirect"],
    "https://console.example/callback/",
    refuse("idp.redirect", { kind: "rule" }),
  ],
  [
    "redirect other origin",
    ["idp", "redirect"],
    "https://evil.example/callback",
    refuse("idp.redirect", { kind: "rule" }),
  ],
  ["redirect absent", ["idp", "redirect"], ABSENT, refuse("idp.redirect", { kind: "missing" })],
  // unknown top-level
  [
    "unknown top-level field",
    ["session_seconds"],
    n(5),
    refuse("session_seconds", { kind: "unknown" }),
  ],
];

describe("door file: field rules", () => {
  for (const [name, path, value, outcome] of rows) {
    test(name, () => {
      const doc = setAt(DOOR, path, value);
      if (outcome === "ok") accept(doorFile, doc);
      else refusal(doorFile, doc, outcome);
    });
  }
  test("origin with a port, and its redirect", () => {
    const doc = setAt(
      setAt(DOOR, ["origin"], "https://console.example:8443"),
      ["idp", "redirect"],
      "https://console.example:8443/callback",
    );
    assert.equal(accept(doorFile, doc).origin, "https://console.example:8443");
  });
  test("not an object", () => {
    refusal(doorFile, [], { code: CODE, kind: "type", prefix: MESSAGE });
  });
});
