/**
 * `npm run bench:decode`: how fast the strict decoding core parses and decodes a realistic
 * configuration document and a small request body (lossless JSON, every field checked).
 */

import {
  absolutePath,
  array,
  decode,
  nullable,
  object,
  oneOf,
  optional,
  parseJson,
  string,
  u32,
  u64,
  usize,
  withDefault,
} from "../src/common/decode/index.ts";
import { runBench, throughput } from "./harness.ts";

/** The code these figures measure: a change there marks them stale in `bench:report`. */
const MEASURES = ["src/common/decode"];

const config = object({
  data_dir: absolutePath(),
  socket: optional(nullable(absolutePath())),
  name: optional(nullable(string({ minBytes: 1, maxBytes: 128 }))),
  branch_cache_bytes_per_shard: usize({ min: 1 }),
  max_frame: u32({ min: 1 }),
  max_clients: usize({ min: 1 }),
  max_page: u32({ min: 1 }),
  timeout_ms: u64({ min: 1 }),
  kept_versions: withDefault(u32({ min: 1, max: 4096 }), 64),
  retention: withDefault(
    object({
      release_max_rows: withDefault(u64({ min: 1, max: 65536 }), 1024n),
      keep: optional(
        object({ versions: nullable(u64({ min: 1 })), days: nullable(u64({ max: 36500 })) }),
      ),
    }),
    { release_max_rows: 1024n, keep: undefined },
  ),
});
const configText = JSON.stringify({
  data_dir: "/srv/skein/store",
  socket: null,
  name: "main",
  branch_cache_bytes_per_shard: 67108864,
  max_frame: 16777216,
  max_clients: 256,
  max_page: 1000,
  timeout_ms: 30000,
  kept_versions: 64,
  retention: { release_max_rows: 1024, keep: { versions: 100, days: 30 } },
});

const body = object({
  namespace: string({ minBytes: 1 }),
  workflow_id: string({ pattern: /^[0-9a-f-]{36}$/ }),
  desired: oneOf(["running", "stopped"]),
  namespaces: array(string()),
});
const bodyText = JSON.stringify({
  namespace: "default",
  workflow_id: "0b8e2f44-57a1-4c55-9d0e-0f6d2f6f5a11",
  desired: "running",
  namespaces: ["default", "agents"],
});

await runBench("decode", { measures: MEASURES }, [
  {
    name: "store config: parse + decode",
    run: () => throughput(() => decode(config, parseJson(configText))),
  },
  {
    name: "store config: decode only",
    run: () => {
      const parsed = parseJson(configText);
      return throughput(() => decode(config, parsed));
    },
  },
  {
    name: "request body: parse + decode",
    run: () => throughput(() => decode(body, parseJson(bodyText))),
  },
  {
    name: "request body: JSON.parse only (reference)",
    run: () => throughput(() => JSON.parse(bodyText)),
  },
]);
