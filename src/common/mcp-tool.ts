/**
 * A tool as MCP's `tools/list` describes it, from the few facts both services' MCP servers
 * keep about each tool (the store's mcp-http and the workflow server's endpoint): its name,
 * words for the model, JSON Schemas of its input and output, and whether it changes or
 * removes anything.
 */

export interface ToolFacts {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema: Readonly<Record<string, unknown>>;
  /** MCP hints: whether the tool changes nothing, or may remove or end something. */
  readonly readOnly: boolean;
  readonly destructive: boolean;
}

export function describeTool(tool: ToolFacts) {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema as { type: "object" },
    outputSchema: tool.outputSchema as { type: "object" },
    annotations: {
      title: tool.title,
      readOnlyHint: tool.readOnly,
      destructiveHint: tool.destructive,
      openWorldHint: false,
    },
  };
}
