/**
 * Web origins and loopback hosts, as configuration files name them: an origin is exactly
 * `scheme://host[:port]` in the canonical form a browser sends in `Origin`, so an allow-list
 * of them is compared with `Origin` headers as plain strings. Shared by the store's door and
 * mcp-http and the workflow server's MCP endpoint; each returns the parsed value or a reason
 * to refuse, in words that name the broken rule, and the caller's decoder picks the code.
 */

import { isIPv4, isIPv6 } from "node:net";

/** Which rule an address broke, for fields whose spec gives each family its own code. */
export type AddressProblem = "syntax" | "scheme" | "credentials" | "path" | "query" | "form";

export type Parsed<T> =
  | { ok: true; value: T }
  | { ok: false; reason: string; problem?: AddressProblem };

/** True for a literal loopback IP: 127.0.0.0/8 or ::1 (any spelling). */
export function isLoopbackIp(host: string): boolean {
  if (isIPv4(host)) return host.startsWith("127.");
  if (isIPv6(host)) {
    try {
      return new URL(`http://[${host}]/`).hostname === "[::1]";
    } catch {
      return false;
    }
  }
  return false;
}

export interface OriginParts {
  readonly scheme: string;
  /** The URL's hostname as parsed (IPv6 in brackets). */
  readonly hostname: string;
  /** The canonical origin (`URL.origin`). */
  readonly origin: string;
}

const AUTHORITY = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s;

/**
 * Checks that `text` is exactly an origin: `scheme://host[:port]`, with no credentials,
 * path, trailing slash, query or fragment, in canonical form (lowercase host, default port
 * omitted). The scheme is checked by the caller.
 */
export function parseCanonicalOrigin(text: string): Parsed<OriginParts> {
  const m = AUTHORITY.exec(text);
  if (m === null)
    return { ok: false, reason: "is not an origin (scheme://host)", problem: "syntax" };
  const authority = m[2]!;
  const rest = m[3]!;
  if (authority.includes("@")) {
    return { ok: false, reason: "must not carry credentials", problem: "credentials" };
  }
  if (rest.includes("#"))
    return { ok: false, reason: "must not have a fragment", problem: "query" };
  if (rest.includes("?")) return { ok: false, reason: "must not have a query", problem: "query" };
  if (rest === "/") return { ok: false, reason: "must not end with /", problem: "path" };
  if (rest !== "") return { ok: false, reason: "must not have a path", problem: "path" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: "is not a valid origin", problem: "syntax" };
  }
  if (url.hostname === "") return { ok: false, reason: "must name a host", problem: "syntax" };
  if (url.origin === "null") {
    return { ok: false, reason: "must use http or https", problem: "scheme" };
  }
  if (url.origin !== text) {
    const port = /:([0-9]+)$/.exec(authority)?.[1];
    if (port !== undefined && url.port === "") {
      return { ok: false, reason: "must omit the default port", problem: "form" };
    }
    return { ok: false, reason: `must be in canonical form (${url.origin})`, problem: "form" };
  }
  return {
    ok: true,
    value: { scheme: url.protocol.slice(0, -1), hostname: url.hostname, origin: url.origin },
  };
}

/** True when `hostname` (as URL parses it, IPv6 bracketed) is a literal loopback IP. */
export function isLoopbackHostname(hostname: string): boolean {
  const bare =
    hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isLoopbackIp(bare);
}

/** An allowed browser origin: canonical, and HTTPS except a literal loopback IP over HTTP. */
export function parseAllowedOrigin(text: string): Parsed<string> {
  const parsed = parseCanonicalOrigin(text);
  if (!parsed.ok) return parsed;
  const { scheme, hostname, origin } = parsed.value;
  if (scheme === "https") return { ok: true, value: origin };
  if (scheme === "http" && isLoopbackHostname(hostname)) return { ok: true, value: origin };
  return {
    ok: false,
    reason: "must use https (http only for a literal loopback IP)",
    problem: "scheme",
  };
}
