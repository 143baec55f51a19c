/**
 * Network addresses in the store's configuration: loopback listen addresses (`host:port`
 * with a numeric loopback IP, since TLS is terminated by a proxy in front), web origins
 * (scheme, host and port only, in the canonical form a browser sends in `Origin`) and URLs
 * placed in headers. Each function returns the parsed value or a reason to refuse, in words
 * that name the broken rule; the decoders decide which code and sentence carry it.
 */

import { isIPv4, isIPv6 } from "node:net";

export interface ListenAddress {
  /** A numeric loopback IP: `127.x.y.z` or `::1` (without brackets). */
  readonly host: string;
  /** 0 asks the operating system for a free port. */
  readonly port: number;
}

/** Which rule an address broke, for fields whose spec gives each family its own code. */
export type AddressProblem = "syntax" | "scheme" | "credentials" | "path" | "query" | "form";

export type Parsed<T> =
  | { ok: true; value: T }
  | { ok: false; reason: string; problem?: AddressProblem };

const PORT = /^(0|[1-9][0-9]{0,4})$/;

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

/** Parses `127.0.0.1:8080` or `[::1]:8080`; names and public IPs are refused. */
export function parseLoopbackListen(text: string): Parsed<ListenAddress> {
  const colon = text.lastIndexOf(":");
  if (colon < 0) return { ok: false, reason: "needs a port" };
  let host = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  else if (host.includes(":")) return { ok: false, reason: "an IPv6 address needs brackets" };
  if (!PORT.test(portText) || Number(portText) > 65535) {
    return { ok: false, reason: "needs a port from 0 to 65535" };
  }
  if (!isIPv4(host) && !isIPv6(host)) return { ok: false, reason: "needs a numeric IP" };
  if (!isLoopbackIp(host)) return { ok: false, reason: "is not a loopback address" };
  return { ok: true, value: { host, port: Number(portText) } };
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
