import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../../../src/common/log.ts";
import { mcpHttpCommand } from "../../../src/store/cli/mcp-http.ts";
import { assertRefusal, runCommand, runToEnd, start, waitFor } from "./harness.ts";

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), "skein-mcp-"));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

const service = (mcp: unknown) => ({
  data_dir: "/srv/skein/store",
  branch_cache_bytes_per_shard: 1048576,
  max_frame: 1048576,
  max_clients: 8,
  max_page: 100,
  timeout_ms: 5000,
  idp: { issuer: "https://idp.example", database: "db1" },
  ...(mcp === undefined ? {} : { mcp_http: mcp }),
});
const MCP = { listen: "127.0.0.1:0", allowed_origins: ["https://app.example"] };
const MESSAGE = "service configuration is not valid: ";

let n = 0;
async function file(content: unknown): Promise<string> {
  const path = join(root, `service-${n++}.json`);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("skein-store mcp-http: refusals", () => {
  const rows: [string, unknown, string][] = [
    ["no mcp_http object", service(undefined), "mcp_http: mcp-http requires an mcp_http object"],
    ["mcp_http null", service(null), "mcp-http requires an mcp_http object"],
    [
      "public listen",
      service({ ...MCP, listen: "0.0.0.0:80" }),
      "mcp_http.listen: listen must be a loopback address behind a TLS proxy",
    ],
    [
      "http origin",
      service({ ...MCP, allowed_origins: ["http://app.example"] }),
      "mcp_http.allowed_origins[0]:",
    ],
    [
      "bad path",
      service({ ...MCP, path: "/mcp/" }),
      "path must be an absolute request path of plain segments",
    ],
    [
      "zero max_connections",
      service({ ...MCP, max_connections: 0 }),
      "mcp_http.max_connections: must be at least 1",
    ],
    [
      "null header timeout",
      service({ ...MCP, header_timeout_ms: null }),
      "mcp_http.header_timeout_ms: null is not accepted",
    ],
    ["unknown field", service({ ...MCP, cors: true }), "mcp_http.cors: unknown field"],
    ["file too large", " ".repeat(1048577), "larger than 1048576 bytes"],
    [
      "no idp: every bearer would act with the socket's authority",
      { ...service(MCP), idp: null },
      "idp: mcp-http requires idp",
    ],
  ];
  for (const [name, content, text] of rows) {
    test(name, async () => {
      const r = await runCommand(mcpHttpCommand(), [await file(content)]);
      assertRefusal(r, "mcp-http", "mcp_http_config_invalid", `${MESSAGE}`);
      assert.ok(r.err.includes(text), r.err);
    });
  }
  test("a relative path is refused", async () => {
    const r = await runCommand(mcpHttpCommand(), ["service.json"]);
    assertRefusal(
      r,
      "mcp-http",
      "mcp_http_config_invalid",
      "the configuration path must be absolute",
    );
  });
  test("another field of the service file keeps its own code", async () => {
    const r = await runCommand(mcpHttpCommand(), [await file({ ...service(MCP), name: "a/b" })]);
    assertRefusal(r, "mcp-http", "invalid_store_name", "name: ");
  });
});

describe("skein-store mcp-http: a listen address in use", () => {
  test("is mcp_http_config_invalid, exit 2", async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
    const port = (taken.address() as AddressInfo).port;
    try {
      const path = await file(service({ ...MCP, listen: `127.0.0.1:${port}` }));
      const cmd = mcpHttpCommand({ logger: silentLogger, until: () => new Promise(() => {}) });
      const r = await runCommand(cmd, [path]);
      assertRefusal(
        r,
        "mcp-http",
        "mcp_http_config_invalid",
        "mcp_http.listen: cannot listen (EADDRINUSE)",
      );
    } finally {
      taken.close();
    }
  });
});

describe("skein-store mcp-http (real process)", () => {
  test("a refusal: exit 2, one line", async () => {
    const r = await runToEnd(["mcp-http", "relative.json"], {});
    assert.equal(r.status, 2);
    assert.equal(r.err.trim().split("\n").length, 1);
  });
  test("listens after its checks and stops on SIGINT", async () => {
    const running = start(["mcp-http", await file(service(MCP))], { SKEIN_LOG_LEVEL: "info" });
    await waitFor(running, () => /mcp-http listening/.test(running.stderr()), "the listener");
    running.child.kill("SIGINT");
    assert.equal((await running.exited).code, 0);
  });
});
