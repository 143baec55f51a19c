/**
 * Options shared by the `skein` client commands, each with a short form: where the server is
 * (`-s/--server`, else `SKEIN_SERVER`, else the default listen address), which bearer to send
 * (`-t/--token`, else `SKEIN_TOKEN`), which namespace (`-n/--namespace`, else
 * `SKEIN_NAMESPACE`, else the server's `namespaces.default`) and how to print
 * (`-o/--output text|json`: human text and tables by default on a terminal, JSON when the
 * output is piped, so scripts get JSON without asking).
 */

import { UsageError } from "../../common/cli.ts";
import { DEFAULT_HTTP_LISTEN } from "../config/schema.ts";

export const DEFAULT_SERVER = `http://${DEFAULT_HTTP_LISTEN}`;

export const clientOptions = {
  server: { type: "string", short: "s" },
  token: { type: "string", short: "t" },
  output: { type: "string", short: "o" },
} as const;

/** The client options plus `-n/--namespace`. */
export const namespacedOptions = {
  ...clientOptions,
  namespace: { type: "string", short: "n" },
} as const;

/** The help lines of the shared options. */
export const CLIENT_HELP = [
  "  -s, --server URL     the server (default SKEIN_SERVER, else http://127.0.0.1:7380)",
  "  -t, --token TOKEN    the bearer (default SKEIN_TOKEN)",
  "  -o, --output FORMAT  text or json (default: text on a terminal, json when piped)",
].join("\n");

export const NAMESPACE_HELP =
  "  -n, --namespace N    the namespace (default SKEIN_NAMESPACE, else the server's namespaces.default)";

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
    throw new UsageError(
      "a bearer token is needed: --token TOKEN or SKEIN_TOKEN (the admin token is in the " +
        "data directory's admin.token; more with `skein token issue`)",
    );
  }
  return token;
}

/** `--namespace`, else SKEIN_NAMESPACE; undefined leaves the choice to the server. */
export function namespaceOption(value: string | undefined): string | undefined {
  const chosen = value ?? process.env.SKEIN_NAMESPACE;
  return chosen === undefined || chosen.trim() === "" ? undefined : chosen;
}

/** The namespace as a body field: absent when neither the option nor the variable is set. */
export function namespaced(value: string | undefined): { namespace?: string } {
  const namespace = namespaceOption(value);
  return namespace === undefined ? {} : { namespace };
}

export type OutputMode = "text" | "json";

export function outputMode(value: string | undefined): OutputMode {
  if (value === undefined) return process.stdout.isTTY === true ? "text" : "json";
  if (value === "text" || value === "json") return value;
  throw new UsageError(`--output must be text or json, found ${JSON.stringify(value)}`);
}

/** The server and bearer of a command's parsed options. */
export function clientOf(values: { server?: string; token?: string }) {
  return { server: serverUrl(values.server), token: bearer(values.token) };
}
