import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { serviceFile } from "../../../src/store/config/service-file.ts";
import type { StoreServiceConfig } from "../../../src/store/config/types.ts";
import { CORE, EMBED, QUERY } from "./fixtures.ts";
import { accept, type Doc, type IntField, intRows, n, refusal, setAt } from "./rows.ts";

const MCP: Doc = { listen: "127.0.0.1:8090", allowed_origins: [] };

type C = StoreServiceConfig;
const q = (k: keyof NonNullable<C["query"]>) => (c: C) => c.query?.[k];
const e = (k: keyof NonNullable<C["embed"]>) => (c: C) => c.embed?.[k];
const QP = (f: string) => `query setting ${f}: `;
const groupMissing = (group: string, f: string) => ({
  kind: "missing" as const,
  field: "",
  prefix: `missing ${group} settings: ${f}`,
});
const MP = (f: string) => `service configuration is not valid: mcp_http.${f}: `;

interface Table {
  readonly base: Doc;
  readonly fields: readonly IntField[];
}

/** Every integer field of the service file, with its type, bounds, default and codes. */
const tables: Record<string, Table> = {
  "core fields": {
    base: CORE,
    fields: [
      {
        path: ["branch_cache_bytes_per_shard"],
        type: "usize",
        min: 1n,
        absent: "missing",
        read: (c: C) => c.branch_cache_bytes_per_shard,
      },
      {
        path: ["max_frame"],
        type: "u32",
        min: 1n,
        absent: "missing",
        number: true,
        read: (c: C) => c.max_frame,
      },
      {
        path: ["max_clients"],
        type: "usize",
        min: 1n,
        absent: "missing",
        read: (c: C) => c.max_clients,
      },
      {
        path: ["max_page"],
        type: "u32",
        min: 1n,
        absent: "missing",
        number: true,
        read: (c: C) => c.max_page,
      },
      {
        path: ["timeout_ms"],
        type: "ms",
        min: 1n,
        absent: "missing",
        read: (c: C) => c.timeout_ms,
      },
      {
        path: ["append_prune_keep_ceiling"],
        type: "u32",
        min: 1n,
        absent: 4096,
        number: true,
        rangeCode: "append_prune_keep_ceiling_zero",
        read: (c: C) => c.append_prune_keep_ceiling,
      },
      {
        path: ["append_prune_removal_cap"],
        type: "u32",
        min: 1n,
        absent: 64,
        number: true,
        rangeCode: "append_prune_removal_cap_zero",
        read: (c: C) => c.append_prune_removal_cap,
      },
      {
        path: ["changes_scan_records"],
        type: "u64",
        min: 2n,
        absent: 10000n,
        belowMin: "must be at least 2",
        read: (c: C) => c.changes_scan_records,
      },
      {
        path: ["changes_node_budget"],
        type: "usize",
        min: 1n,
        absent: 65536n,
        read: (c: C) => c.changes_node_budget,
      },
      {
        path: ["changes_max_page"],
        type: "u32",
        min: 1n,
        absent: 1000,
        number: true,
        read: (c: C) => c.changes_max_page,
      },
      {
        path: ["kept_versions"],
        type: "u32",
        min: 1n,
        max: 4096n,
        absent: 64,
        number: true,
        read: (c: C) => c.kept_versions,
      },
    ],
  },
  "create object": {
    base: {
      ...CORE,
      create: { shards: n(4), cache_bytes_total: n(1 << 30), executor_threads: n(2) },
    },
    fields: (["shards", "cache_bytes_total", "executor_threads"] as const).map((k) => ({
      path: ["create", k],
      type: "usize" as const,
      min: 1n,
      absent: "missing" as const,
      read: (c: C) => c.create?.[k],
    })),
  },
  "retention object": {
    base: CORE,
    fields: [
      {
        path: ["retention", "release_max_rows"],
        type: "u64",
        min: 1n,
        max: 65536n,
        absent: 1024,
        number: true,
        read: (c: C) => c.retention.release_max_rows,
      },
      {
        path: ["retention", "release_batch"],
        type: "usize",
        min: 1n,
        absent: 256n,
        read: (c: C) => c.retention.release_batch,
      },
      {
        path: ["retention", "keep", "versions"],
        type: "u64",
        min: 1n,
        absent: null,
        nullable: true,
        belowMin: "the head is always kept",
        read: (c: C) => c.retention.keep?.versions,
      },
      {
        path: ["retention", "keep", "days"],
        type: "u64",
        min: 0n,
        max: 36500n,
        absent: null,
        nullable: true,
        number: true,
        read: (c: C) => c.retention.keep?.days,
      },
    ],
  },
  "query group": {
    base: { ...CORE, ...QUERY },
    fields: [
      {
        path: ["query_time_ms"],
        type: "ms",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("query", "query_time_ms"),
        prefix: QP("query_time_ms"),
        read: q("query_time_ms"),
      },
      {
        path: ["query_memory_bytes"],
        type: "u64",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("query", "query_memory_bytes"),
        prefix: QP("query_memory_bytes"),
        read: q("query_memory_bytes"),
      },
      {
        path: ["query_outputs_per_record"],
        type: "u64",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("query", "query_outputs_per_record"),
        prefix: QP("query_outputs_per_record"),
        read: q("query_outputs_per_record"),
      },
      {
        path: ["query_scan_records"],
        type: "u64",
        min: 2n,
        absent: "missing",
        absentRefusal: groupMissing("query", "query_scan_records"),
        prefix: QP("query_scan_records"),
        read: q("query_scan_records"),
      },
      {
        path: ["query_max_running"],
        type: "usize",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("query", "query_max_running"),
        prefix: QP("query_max_running"),
        read: q("query_max_running"),
      },
    ],
  },
  "embedding group": {
    base: { ...CORE, ...EMBED, embed_windows: true, embed_restart_most_ms: n(10n ** 13n) },
    fields: [
      {
        path: ["embed_memory_bytes"],
        type: "u64",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_memory_bytes"),
        rangeCode: "embed_limits",
        read: e("embed_memory_bytes"),
      },
      {
        path: ["embed_threads"],
        type: "u64",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_threads"),
        rangeCode: "embed_limits",
        read: e("embed_threads"),
      },
      {
        path: ["embed_batch_items"],
        type: "usize",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_batch_items"),
        rangeCode: "embed_limits",
        read: e("embed_batch_items"),
      },
      {
        path: ["embed_input_bytes"],
        type: "u64",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_input_bytes"),
        read: e("embed_input_bytes"),
      },
      {
        path: ["embed_frame_bytes"],
        type: "u32",
        min: 8192n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_frame_bytes"),
        number: true,
        read: e("embed_frame_bytes"),
      },
      {
        path: ["embed_ready_ms"],
        type: "ms",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_ready_ms"),
        read: e("embed_ready_ms"),
      },
      {
        path: ["embed_waiting"],
        type: "usize",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_waiting"),
        read: e("embed_waiting"),
      },
      {
        path: ["embed_request_items"],
        type: "usize",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_request_items"),
        read: e("embed_request_items"),
      },
      {
        path: ["embed_page_records"],
        type: "u32",
        min: 1n,
        max: 1024n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_page_records"),
        number: true,
        read: e("embed_page_records"),
      },
      {
        path: ["embed_writer_wait_ms"],
        type: "ms",
        min: 1n,
        absent: 1000n,
        read: e("embed_writer_wait_ms"),
      },
      {
        path: ["embed_max_windows"],
        type: "u64",
        min: 2n,
        max: 1024n,
        absent: 32n,
        read: e("embed_max_windows"),
      },
      {
        path: ["embed_restart_ms"],
        type: "ms",
        min: 1n,
        absent: 1000n,
        read: e("embed_restart_ms"),
      },
    ],
  },
  "embedding group (restart ceiling, windows off)": {
    base: { ...CORE, ...EMBED, embed_restart_ms: n(1) },
    fields: [
      {
        path: ["embed_call_ms"],
        type: "ms",
        min: 1n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_call_ms"),
        read: e("embed_call_ms"),
      },
      {
        path: ["embed_restart_most_ms"],
        type: "ms",
        min: 1n,
        absent: 300000n,
        read: e("embed_restart_most_ms"),
      },
    ],
  },
  "embedding group (tokens above any overlap)": {
    base: { ...CORE, ...EMBED, embed_tokens: n("18446744073709551615"), embed_windows: true },
    fields: [
      {
        path: ["embed_window_overlap_tokens"],
        type: "u64",
        min: 0n,
        max: 18446744073709551614n,
        absent: 64n,
        aboveMax: { kind: "rule", code: "embed_limits", field: "embed_window_overlap_tokens" },
        read: e("embed_window_overlap_tokens"),
      },
      {
        path: ["embed_tokens"],
        type: "u64",
        min: 65n,
        absent: "missing",
        absentRefusal: groupMissing("embed", "embed_tokens"),
        rangeCode: "embed_limits",
        read: e("embed_tokens"),
      },
    ],
  },
  "mcp_http object (types only under serve)": {
    base: { ...CORE, mcp_http: MCP },
    fields: [
      {
        path: ["mcp_http", "max_connections"],
        type: "usize",
        min: 1n,
        absent: 64n,
        code: "mcp_http_config_invalid",
        prefix: MP("max_connections"),
        read: (c: C) => c.mcp_http?.max_connections,
      },
      {
        path: ["mcp_http", "header_timeout_ms"],
        type: "u64",
        min: 1n,
        absent: 2000n,
        code: "mcp_http_config_invalid",
        prefix: MP("header_timeout_ms"),
        read: (c: C) => c.mcp_http?.header_timeout_ms,
      },
      {
        path: ["mcp_http", "body_timeout_ms"],
        type: "u64",
        min: 1n,
        absent: 5000n,
        code: "mcp_http_config_invalid",
        prefix: MP("body_timeout_ms"),
        read: (c: C) => c.mcp_http?.body_timeout_ms,
      },
    ],
  },
};

for (const [title, table] of Object.entries(tables)) {
  describe(`service file: ${title}`, () => {
    for (const field of table.fields) {
      for (const row of intRows(field)) {
        const name = `${field.path.join(".")} = ${row.name}`;
        test(name, () => {
          const doc = setAt(table.base, field.path, row.value);
          if ("accept" in row.outcome) {
            const value = accept(serviceFile, doc);
            assert.deepEqual((field.read as (c: C) => unknown)(value), row.outcome.accept);
          } else if (field.path[0] === "embed_tokens" && row.name.startsWith("below min")) {
            // Below the overlap the refusal is the window rule, carried by embed_limits.
            refusal(serviceFile, doc, { code: "embed_limits" });
          } else {
            refusal(serviceFile, doc, row.outcome.refuse);
          }
        });
      }
    }
  });
}
