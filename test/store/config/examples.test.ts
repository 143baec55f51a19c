import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { child, decode, parseJson } from "../../../src/common/decode/index.ts";
import { doorFile } from "../../../src/store/config/door.ts";
import { mcpHttpPolicy } from "../../../src/store/config/mcp-http.ts";
import { serviceFile } from "../../../src/store/config/service-file.ts";

const page = readFileSync(
  fileURLToPath(new URL("../../../docs/store-config.md", import.meta.url)),
  "utf8",
);

/** The JSON blocks of docs/store-config.md, by the name in the comment above each. */
function examples(): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of page.matchAll(/<!-- example: ([\w-]+) -->\n```json\n([\s\S]*?)\n```/g)) {
    out.set(m[1]!, m[2]!);
  }
  return out;
}

describe("docs/store-config.md examples decode", () => {
  const found = examples();
  test("the page has its three examples", () => {
    assert.deepEqual([...found.keys()].sort(), ["door", "service", "service-minimal"]);
  });
  test("service: every group enabled", () => {
    const r = decode(serviceFile, parseJson(found.get("service")!));
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    assert.ok(r.value.query !== null && r.value.embed !== null && r.value.idp !== null);
    assert.ok(r.value.create !== null && r.value.mcp_http !== null);
  });
  test("service: mcp_http passes the mcp-http policy", () => {
    const raw = parseJson(found.get("service")!) as { mcp_http: unknown };
    const r = decode(mcpHttpPolicy, raw.mcp_http, child(undefined, "mcp_http"));
    assert.ok(r.ok, r.ok ? "" : r.error.message);
  });
  test("service-minimal", () => {
    const r = decode(serviceFile, parseJson(found.get("service-minimal")!));
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    assert.equal(r.value.query, null);
    assert.equal(r.value.embed, null);
  });
  test("door", () => {
    const r = decode(doorFile, parseJson(found.get("door")!));
    assert.ok(r.ok, r.ok ? "" : r.error.message);
  });
});
