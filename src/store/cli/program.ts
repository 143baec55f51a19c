/**
 * The `skein-store` program: the store service, its door, its HTTP MCP endpoint and a
 * socket client. Each subcommand lives in its own module under this folder.
 */

import type { Program } from "../../common/cli.ts";
import { VERSION } from "../../common/version.ts";
import { callCommand } from "./call.ts";
import { diffCommand } from "./diff.ts";
import { doorCommand } from "./door.ts";
import { embedCommand } from "./embed.ts";
import { mcpHttpCommand } from "./mcp-http.ts";
import { modelCommand } from "./model.ts";
import { queryCommand } from "./query.ts";
import { searchCommand } from "./search.ts";
import { serveCommand } from "./serve.ts";
import { verbCommands } from "./verb-commands.ts";
import { versioningCommands } from "./versioning-commands.ts";

export const storeProgram: Program = {
  name: "skein-store",
  version: VERSION,
  summary: "a versioned document store for agents",
  commands: [
    serveCommand(),
    doorCommand(),
    mcpHttpCommand(),
    callCommand,
    ...verbCommands,
    diffCommand,
    ...versioningCommands,
    queryCommand,
    embedCommand,
    searchCommand,
    modelCommand,
  ],
};
