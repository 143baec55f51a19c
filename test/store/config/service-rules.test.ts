import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EMBED_REQUIRED_FIELDS } from "../../../src/store/config/embed.ts";
import { QUERY_FIELDS } from "../../../src/store/config/query.ts";
import { serviceFile } from "../../../src/store/config/service-file.ts";
import { CORE, EMBED, QUERY } from "./fixtures.ts";
import { ABSENT, accept, type Doc, type Expected, n, refusal, setAt } from "./rows.ts";

const pick = (doc: Doc, keys: readonly string[]) =>
  Object.fromEntries(keys.map((k) => [k, doc[k]]));
const omit = (doc: Doc, keys: readonly string[]) =>
  Object.fromEntries(Object.entries(doc).filter(([k]) => !keys.includes(k)));

describe("service file: query group is all or nothing", () => {
  test("all six omitted: queries disabled", () => {
    assert.equal(accept(serviceFile, CORE).query, null);
  });
  test("all six given: one query value", () => {
    assert.deepEqual(accept(serviceFile, { ...CORE, ...QUERY }).query, {
      query_worker: "/usr/lib/skein/query-worker",
      query_time_ms: 2000n,
      query_memory_bytes: 67108864n,
      query_outputs_per_record: 16n,
      query_scan_records: 100000n,
      query_max_running: 4n,
    });
  });
  for (const field of QUERY_FIELDS) {
    const others = QUERY_FIELDS.filter((f) => f !== field);
    test(`only ${field}: the other five are listed`, () => {
      refusal(
        serviceFile,
        { ...CORE, ...pick(QUERY, [field]) },
        {
          kind: "missing",
          field: "",
          prefix: `missing query settings: ${others.join(", ")}`,
        },
      );
    });
    test(`all but ${field}: it is listed`, () => {
      const e = refusal(serviceFile, { ...CORE, ...omit(QUERY, [field]) }, { kind: "missing" });
      assert.equal(e.message, `missing query settings: ${field}`);
    });
    test(`${field} null: query setting plus field and reason`, () => {
      refusal(
        serviceFile,
        { ...CORE, ...QUERY, [field]: null },
        {
          kind: "null",
          field,
          prefix: `query setting ${field}: null is not accepted`,
        },
      );
    });
  }
  const worker: [string, unknown, Expected | "ok"][] = [
    ["absolute", "/opt/q", "ok"],
    ["relative", "bin/q", { kind: "shape", includes: "query_worker must be an absolute path" }],
    ["empty", "", { kind: "shape", includes: "query_worker must be an absolute path" }],
    ["NUL", "/opt/\0q", { kind: "shape" }],
    ["number", n(1), { kind: "type" }],
  ];
  for (const [name, value, outcome] of worker) {
    test(`query_worker ${name}`, () => {
      const doc = { ...CORE, ...QUERY, query_worker: value };
      if (outcome === "ok") assert.equal(accept(serviceFile, doc).query?.query_worker, value);
      else refusal(serviceFile, doc, { ...outcome, prefix: "query setting query_worker: " });
    });
  }
});

const TRIGGERS = [
  ...EMBED_REQUIRED_FIELDS,
  "embed_windows",
  "embed_max_windows",
  "embed_window_overlap_tokens",
  "embed_writer_wait_ms",
] as const;
const TRIGGER_VALUES: Doc = {
  ...EMBED,
  embed_windows: true,
  embed_max_windows: n(8),
  embed_window_overlap_tokens: n(8),
  embed_writer_wait_ms: n(500),
};

describe("service file: embedding group", () => {
  test("omitted: embedding disabled", () => {
    assert.equal(accept(serviceFile, CORE).embed, null);
  });
  test("fourteen fields: defaults for the rest, windows off", () => {
    const embed = accept(serviceFile, { ...CORE, ...EMBED }).embed;
    assert.ok(embed !== null);
    assert.equal(embed.embed_writer_wait_ms, 1000n);
    assert.equal(embed.embed_windows, false);
    assert.equal(embed.embed_max_windows, null);
    assert.equal(embed.embed_window_overlap_tokens, null);
    assert.equal(embed.embed_restart_ms, 1000n);
    assert.equal(embed.embed_restart_most_ms, 300000n);
    assert.equal(embed.embed_question_worker, true);
    assert.equal(embed.embed_model_sha256, "0".repeat(64));
  });
  test("windows on: 32 windows and 64 overlap tokens by default", () => {
    const embed = accept(serviceFile, { ...CORE, ...EMBED, embed_windows: true }).embed;
    assert.equal(embed?.embed_max_windows, 32n);
    assert.equal(embed?.embed_window_overlap_tokens, 64n);
  });
  for (const field of TRIGGERS) {
    test(`only ${field}: the whole group is asked for`, () => {
      const missing = EMBED_REQUIRED_FIELDS.filter((f) => f !== field);
      refusal(
        serviceFile,
        { ...CORE, ...pick(TRIGGER_VALUES, [field]) },
        {
          kind: "missing",
          field: "",
          prefix: `missing embed settings: ${missing.join(", ")}`,
        },
      );
    });
  }
  for (const field of EMBED_REQUIRED_FIELDS) {
    test(`all but ${field}: it is listed`, () => {
      const e = refusal(serviceFile, { ...CORE, ...omit(EMBED, [field]) }, { kind: "missing" });
      assert.equal(e.message, `missing embed settings: ${field}`);
    });
    test(`${field} null is refused`, () => {
      refusal(serviceFile, { ...CORE, ...EMBED, [field]: null }, { kind: "null", field });
    });
  }
  const standalone: [string, unknown][] = [
    ["embed_restart_ms", n(2000)],
    ["embed_restart_most_ms", n(600000)],
    ["embed_question_worker", false],
  ];
  for (const [field, value] of standalone) {
    test(`${field} alone does not ask for the group`, () => {
      assert.equal(accept(serviceFile, { ...CORE, [field]: value }).embed, null);
    });
  }
  const rules: [string, Doc, Expected | ((d: ReturnType<typeof accept>) => void)][] = [
    [
      "embed_max_windows with windows off",
      { embed_max_windows: n(4) },
      { kind: "rule", field: "embed_max_windows", includes: "requires embed_windows true" },
    ],
    [
      "embed_max_windows with windows false",
      { embed_windows: false, embed_max_windows: n(4) },
      { kind: "rule", field: "embed_max_windows", includes: "requires embed_windows true" },
    ],
    [
      "overlap with windows off",
      { embed_window_overlap_tokens: n(0) },
      {
        kind: "rule",
        field: "embed_window_overlap_tokens",
        includes: "requires embed_windows true",
      },
    ],
    [
      "overlap zero with windows on",
      { embed_windows: true, embed_window_overlap_tokens: n(0) },
      (d) =>
        assert.equal(
          (d as { embed: { embed_window_overlap_tokens: bigint } }).embed
            .embed_window_overlap_tokens,
          0n,
        ),
    ],
    [
      "overlap equal to embed_tokens",
      { embed_windows: true, embed_window_overlap_tokens: n(512) },
      {
        kind: "rule",
        code: "embed_limits",
        field: "embed_window_overlap_tokens",
        includes: "must be below embed_tokens",
      },
    ],
    [
      "overlap just below embed_tokens",
      { embed_windows: true, embed_window_overlap_tokens: n(511) },
      (d) =>
        assert.equal(
          (d as { embed: { embed_window_overlap_tokens: bigint } }).embed
            .embed_window_overlap_tokens,
          511n,
        ),
    ],
    [
      "default overlap 64 with embed_tokens 64",
      { embed_windows: true, embed_tokens: n(64) },
      { kind: "rule", code: "embed_limits", field: "embed_window_overlap_tokens" },
    ],
    [
      "embed_max_windows 1",
      { embed_windows: true, embed_max_windows: n(1) },
      { kind: "range", field: "embed_max_windows" },
    ],
    [
      "embed_max_windows 1025",
      { embed_windows: true, embed_max_windows: n(1025) },
      { kind: "range", field: "embed_max_windows" },
    ],
    [
      "restart most below restart",
      { embed_restart_ms: n(5000), embed_restart_most_ms: n(4999) },
      {
        kind: "rule",
        field: "embed_restart_most_ms",
        includes: "must be at least embed_restart_ms",
      },
    ],
    [
      "restart most equal to restart",
      { embed_restart_ms: n(5000), embed_restart_most_ms: n(5000) },
      (d) =>
        assert.equal(
          (d as { embed: { embed_restart_most_ms: bigint } }).embed.embed_restart_most_ms,
          5000n,
        ),
    ],
    [
      "restart above the default ceiling",
      { embed_restart_ms: n(300001) },
      { kind: "rule", field: "embed_restart_most_ms" },
    ],
    [
      "embed_workers is an unknown field",
      { embed_workers: n(2) },
      { kind: "unknown", field: "embed_workers" },
    ],
    [
      "embed_model_dir relative",
      { embed_model_dir: "model" },
      {
        kind: "shape",
        code: "embed_limits",
        field: "embed_model_dir",
        includes: "embed_limits: model_dir must be absolute",
      },
    ],
    [
      "embed_worker relative",
      { embed_worker: "worker" },
      { kind: "shape", field: "embed_worker", includes: "embed_worker must be an absolute path" },
    ],
    [
      "embed_model_sha256 is not checked for hex shape",
      { embed_model_sha256: "not-hex" },
      (d) =>
        assert.equal(
          (d as { embed: { embed_model_sha256: string } }).embed.embed_model_sha256,
          "not-hex",
        ),
    ],
    [
      "embed_model_sha256 number",
      { embed_model_sha256: n(1) },
      { kind: "type", field: "embed_model_sha256" },
    ],
    ["embed_windows string", { embed_windows: "yes" }, { kind: "type", field: "embed_windows" }],
    [
      "embed_question_worker null",
      { embed_question_worker: null },
      { kind: "null", field: "embed_question_worker" },
    ],
  ];
  for (const [name, change, outcome] of rules) {
    test(name, () => {
      const doc = { ...CORE, ...EMBED, ...change };
      if (typeof outcome === "function") outcome(accept(serviceFile, doc));
      else refusal(serviceFile, doc, outcome);
    });
  }
});

describe("service file: paths and names", () => {
  const rows: [
    string,
    string[],
    unknown,
    Expected | { value: unknown; read: (c: never) => unknown },
  ][] = [
    [
      "data_dir absolute",
      ["data_dir"],
      "/a/b",
      { value: "/a/b", read: (c: { data_dir: string }) => c.data_dir },
    ],
    [
      "data_dir relative",
      ["data_dir"],
      "a/b",
      { kind: "shape", code: "invalid_data_dir", includes: "data_dir and socket must be absolute" },
    ],
    ["data_dir empty", ["data_dir"], "", { kind: "shape", code: "invalid_data_dir" }],
    ["data_dir null", ["data_dir"], null, { kind: "null", code: "invalid_data_dir" }],
    ["data_dir number", ["data_dir"], n(1), { kind: "type", code: "invalid_data_dir" }],
    ["data_dir absent", ["data_dir"], ABSENT, { kind: "missing" }],
    [
      "socket absolute",
      ["socket"],
      "/run/s.sock",
      { value: "/run/s.sock", read: (c: { socket: string }) => c.socket },
    ],
    ["socket null", ["socket"], null, { value: null, read: (c: { socket: string }) => c.socket }],
    [
      "socket absent",
      ["socket"],
      ABSENT,
      { value: null, read: (c: { socket: string }) => c.socket },
    ],
    [
      "socket relative",
      ["socket"],
      "s.sock",
      { kind: "shape", code: "invalid_socket", includes: "data_dir and socket must be absolute" },
    ],
    ["socket number", ["socket"], n(3), { kind: "type", code: "invalid_socket" }],
    ["create null", ["create"], null, { value: null, read: (c: { create: unknown }) => c.create }],
    [
      "create absent",
      ["create"],
      ABSENT,
      { value: null, read: (c: { create: unknown }) => c.create },
    ],
    ["create array", ["create"], [], { kind: "type" }],
    ["retention null", ["retention"], null, { kind: "null", field: "retention" }],
    ["retention.keep null", ["retention", "keep"], null, { kind: "null", field: "retention.keep" }],
    [
      "retention.keep empty: both unset",
      ["retention", "keep"],
      {},
      {
        value: { versions: null, days: null },
        read: (c: { retention: { keep: unknown } }) => c.retention.keep,
      },
    ],
    [
      "retention absent: release defaults",
      ["retention"],
      ABSENT,
      {
        value: { release_max_rows: 1024, release_batch: 256n, keep: null },
        read: (c: { retention: unknown }) => c.retention,
      },
    ],
    ["idp absent", ["idp"], ABSENT, { value: null, read: (c: { idp: unknown }) => c.idp }],
    ["idp null", ["idp"], null, { value: null, read: (c: { idp: unknown }) => c.idp }],
    [
      "mcp_http null",
      ["mcp_http"],
      null,
      { value: null, read: (c: { mcp_http: unknown }) => c.mcp_http },
    ],
  ];
  for (const [name, path, value, outcome] of rows) {
    test(name, () => {
      const doc = setAt(CORE, path, value);
      if ("read" in outcome)
        assert.deepEqual(outcome.read(accept(serviceFile, doc) as never), outcome.value);
      else refusal(serviceFile, doc, { field: path.join("."), ...outcome });
    });
  }

  const names: [string, unknown, boolean][] = [
    ["one byte", "a", true],
    ["128 ASCII bytes", "x".repeat(128), true],
    ["128 UTF-8 bytes", "é".repeat(64), true],
    ["dots inside", "a.b", true],
    ["three dots", "...", true],
    ["spaces", "my store", true],
    ["null: the default applies", null, true],
    ["empty", "", false],
    ["129 bytes", "x".repeat(129), false],
    ["130 UTF-8 bytes", "é".repeat(65), false],
    ["slash", "a/b", false],
    ["backslash", "a\\b", false],
    ["NUL", "a\0b", false],
    [".", ".", false],
    ["..", "..", false],
    ["number", n(1), false],
    ["array", ["a"], false],
  ];
  for (const [name, value, ok] of names) {
    test(`name: ${name}`, () => {
      const doc = { ...CORE, name: value };
      if (ok) assert.equal(accept(serviceFile, doc).name, value);
      else refusal(serviceFile, doc, { code: "invalid_store_name", field: "name" });
    });
  }
});

describe("service file: idp object", () => {
  const IDP = { issuer: "https://idp.example", database: "main_db-1" };
  const issuers: [string, string | null][] = [
    ["https://idp.example", null],
    ["http://idp.example", null],
    ["https://idp.example:8443", null],
    ["http://127.0.0.1:9000", null],
    ["http://[::1]:9000", null],
    ["https://idp.example/api", "idp_origin_required"],
    ["https://idp.example/", "idp_origin_required"],
    ["https://idp.example/v1/authz", "idp_origin_required"],
    ["https://user:pw@idp.example", "contract_refused"],
    ["https://idp.example?x=1", "contract_refused"],
    ["https://idp.example#f", "contract_refused"],
    ["https://IDP.example", "contract_refused"],
    ["https://idp.example:443", "contract_refused"],
    ["ftp://idp.example", "endpoint_refused"],
    ["idp.example", "endpoint_refused"],
    ["", "endpoint_refused"],
    ["https://", "endpoint_refused"],
    ["mailto:a@b", "endpoint_refused"],
  ];
  for (const [issuer, code] of issuers) {
    test(`issuer ${JSON.stringify(issuer)} → ${code ?? "accepted"}`, () => {
      const doc = { ...CORE, idp: { ...IDP, issuer } };
      if (code === null) assert.equal(accept(serviceFile, doc).idp?.issuer, issuer);
      else refusal(serviceFile, doc, { code, field: "idp.issuer", includes: code });
    });
  }
  const databases: [unknown, boolean][] = [
    ["db", true],
    ["A-z_0-9", true],
    ["-", true],
    ["", false],
    ["a b", false],
    ["a.b", false],
    ["a/b", false],
    ["é", false],
    [n(1), false],
    [null, false],
  ];
  for (const [database, ok] of databases) {
    test(`database ${JSON.stringify(database)}`, () => {
      const doc = { ...CORE, idp: { ...IDP, database } };
      if (ok) assert.equal(accept(serviceFile, doc).idp?.database, database);
      else refusal(serviceFile, doc, { field: "idp.database" });
    });
  }
  test("database charset refusal has the spec's words", () => {
    refusal(
      serviceFile,
      { ...CORE, idp: { ...IDP, database: "a b" } },
      {
        includes: "database id must be letters, digits, _ or - only",
      },
    );
  });
  const credential: [unknown, Expected | "ok"][] = [
    ["/etc/skein/app.credential", "ok"],
    [null, "ok"],
    ["app.credential", { kind: "shape" }],
    [n(1), { kind: "type" }],
  ];
  for (const [file, outcome] of credential) {
    test(`placement_credential_file ${JSON.stringify(file)}`, () => {
      const doc = { ...CORE, idp: { ...IDP, placement_credential_file: file } };
      if (outcome === "ok")
        assert.equal(accept(serviceFile, doc).idp?.placement_credential_file, file);
      else refusal(serviceFile, doc, { field: "idp.placement_credential_file", ...outcome });
    });
  }
  for (const field of ["issuer", "database"]) {
    test(`idp.${field} is required`, () => {
      refusal(
        serviceFile,
        { ...CORE, idp: omit(IDP, [field]) },
        { kind: "missing", field: `idp.${field}` },
      );
    });
  }
});

describe("service file: unknown fields are refused in every object", () => {
  const places: [string, string[], Doc][] = [
    ["top level", [], CORE],
    [
      "create",
      ["create"],
      { ...CORE, create: { shards: n(1), cache_bytes_total: n(1), executor_threads: n(1) } },
    ],
    ["retention", ["retention"], { ...CORE, retention: {} }],
    ["retention.keep", ["retention", "keep"], { ...CORE, retention: { keep: {} } }],
    ["idp", ["idp"], { ...CORE, idp: { issuer: "https://i.example", database: "d" } }],
    [
      "mcp_http",
      ["mcp_http"],
      { ...CORE, mcp_http: { listen: "127.0.0.1:1", allowed_origins: [] } },
    ],
  ];
  for (const [name, path, base] of places) {
    test(name, () => {
      const doc = setAt(base, [...path, "surprise"], n(1));
      const field = [...path, "surprise"].join(".");
      const code = name === "mcp_http" ? "mcp_http_config_invalid" : "decode_refused";
      refusal(serviceFile, doc, { kind: "unknown", field, code });
    });
  }
  test("a duplicate key is refused by the parser", async () => {
    const { parseJson } = await import("../../../src/common/decode/index.ts");
    assert.throws(() => parseJson('{"data_dir":"/a","data_dir":"/b"}'));
  });
});

describe("service file: mcp_http decoded for types only under serve", () => {
  const MCP = { listen: "127.0.0.1:8090", allowed_origins: [] };
  const rows: [string, Doc, Expected | "ok"][] = [
    ["a public listen address is not judged by serve", { listen: "0.0.0.0:80" }, "ok"],
    ["a non-canonical origin is not judged by serve", { allowed_origins: ["HTTPS://X"] }, "ok"],
    ["a bad path is not judged by serve", { path: "no-slash" }, "ok"],
    ["listen number", { listen: n(80) }, { kind: "type", field: "mcp_http.listen" }],
    ["listen null", { listen: null }, { kind: "null", field: "mcp_http.listen" }],
    ["listen absent", { listen: ABSENT }, { kind: "missing", field: "mcp_http.listen" }],
    [
      "allowed_origins string",
      { allowed_origins: "https://a" },
      { kind: "type", field: "mcp_http.allowed_origins" },
    ],
    [
      "allowed_origins item number",
      { allowed_origins: [n(1)] },
      { kind: "type", field: "mcp_http.allowed_origins[0]" },
    ],
    [
      "allowed_origins absent",
      { allowed_origins: ABSENT },
      { kind: "missing", field: "mcp_http.allowed_origins" },
    ],
    ["path null", { path: null }, { kind: "null", field: "mcp_http.path" }],
    [
      "resource_metadata_url number",
      { resource_metadata_url: n(1) },
      { kind: "type", field: "mcp_http.resource_metadata_url" },
    ],
    ["resource_metadata_url null", { resource_metadata_url: null }, "ok"],
  ];
  for (const [name, change, outcome] of rows) {
    test(name, () => {
      let mcp: Doc = MCP;
      for (const [k, v] of Object.entries(change)) mcp = setAt(mcp, [k], v);
      const doc = { ...CORE, mcp_http: mcp };
      if (outcome === "ok") assert.ok(accept(serviceFile, doc).mcp_http !== null);
      else
        refusal(serviceFile, doc, {
          code: "mcp_http_config_invalid",
          prefix: "service configuration is not valid: ",
          ...outcome,
        });
    });
  }
  test("defaults", () => {
    const mcp = accept(serviceFile, { ...CORE, mcp_http: MCP }).mcp_http;
    assert.deepEqual(mcp, {
      listen: "127.0.0.1:8090",
      allowed_origins: [],
      path: "/mcp",
      resource_metadata_url: null,
      max_connections: 64n,
      header_timeout_ms: 2000n,
      body_timeout_ms: 5000n,
    });
  });
});
