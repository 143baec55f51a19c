/**
 * The store service's configuration: decoders for the service file, the door file, the
 * door's environment and the `mcp_http` policy, the typed values they produce, and the
 * bounded readers for configuration and credential files. See docs/store-config.md.
 */

export {
  DOOR_CONFIG_INVALID,
  DOOR_CONFIG_MESSAGE,
  MCP_HTTP_CONFIG_INVALID,
  MCP_HTTP_CONFIG_MESSAGE,
  rewrite,
  withContext,
} from "../errors.ts";
export * from "./addresses.ts";
export * from "./door.ts";
export * from "./door-env.ts";
export * from "./embed.ts";
export * from "./files.ts";
export * from "./idp.ts";
export * from "./limits.ts";
export * from "./mcp-http.ts";
export * from "./query.ts";
export * from "./retention.ts";
export * from "./service-file.ts";
export * from "./store-name.ts";
export type * from "./types.ts";
