// The MCP error answers the worker gives the model are declared once
// (src/worker/kinds/agent/mcp/errors.ts) and docs/agents.md lists exactly those.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MCP_TOOL_ERRORS } from "../../../../src/worker/kinds/agent/mcp/errors.ts";
import { documentedCodes } from "../../../support/doc-tables.ts";

test("docs/agents.md lists exactly the worker's MCP error answers", () => {
  const documented = documentedCodes("docs/agents.md", "### Errors the worker answers a call with");
  assert.deepEqual([...documented].sort(), Object.keys(MCP_TOOL_ERRORS).sort());
});
