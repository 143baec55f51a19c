// The EngineStore contract, run against the file store that the engine tests and benchmarks
// use; the server's persistence backends run the same suite.

import { join } from "node:path";
import { engineStoreConformance } from "../../helpers/engine-store-conformance.ts";
import { FileStore } from "../../helpers/file-store.ts";
import { tempDir } from "../../helpers/worker-endpoint.ts";

engineStoreConformance(
  "history file",
  async () => new FileStore(join(await tempDir(), "history.jsonl")),
);
