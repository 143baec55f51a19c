/**
 * Options shared by the `skein` client commands: where the server is (`--server`, else
 * `SKEIN_SERVER`, else the default listen address) and which bearer to send (`--token`,
 * else `SKEIN_TOKEN`), plus `--config` for the commands that read the server's files.
 */

import { UsageError } from "../../common/cli.ts";
import { DEFAULT_HTTP_LISTEN } from "../config/schema.ts";

export const DEFAULT_SERVER = `http://${DEFAULT_HTTP_LISTEN}`;

export const clientOptions = {
  server: { type: "string" },
  token: { type: "string" },
} as const;

export function serverUrl(value: string | undefined): string {
  const url = value ?? process.env.SKEIN_SERVER ?? DEFAULT_SERVER;
  if (!/^https?:\/\/[^/]+/.test(url)) {
    throw new UsageError(`--server must be an http(s) URL, found ${JSON.stringify(url)}`);
  }
  return url.replace(/\/+$/, "");
}

export function bearer(value: string | undefined): string {
  const token = (value ?? process.env.SKEIN_TOKEN)?.trim();
  if (token === undefined || token === "") {
    throw new UsageError("a bearer token is needed: --token TOKEN or SKEIN_TOKEN");
  }
  return token;
}
