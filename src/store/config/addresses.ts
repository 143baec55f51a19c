/**
 * Network addresses in the store's configuration: loopback listen addresses (`host:port`
 * with a numeric loopback IP, since TLS is terminated by a proxy in front), web origins
 * (scheme, host and port only, in the canonical form a browser sends in `Origin`) and URLs
 * placed in headers. Each function returns the parsed value or a reason to refuse, in words
 * that name the broken rule; the decoders decide which code and sentence carry it.
 */

import { isIPv4, isIPv6 } from "node:net";
import { isLoopbackIp, type Parsed } from "../../common/origins.ts";

// Origins moved to common (the workflow server's MCP endpoint checks them too); the store's
// configuration modules keep importing them from here.
export {
  type AddressProblem,
  isLoopbackHostname,
  isLoopbackIp,
  type OriginParts,
  type Parsed,
  parseAllowedOrigin,
  parseCanonicalOrigin,
} from "../../common/origins.ts";

export interface ListenAddress {
  /** A numeric loopback IP: `127.x.y.z` or `::1` (without brackets). */
  readonly host: string;
  /** 0 asks the operating system for a free port. */
  readonly port: number;
}

const PORT = /^(0|[1-9][0-9]{0,4})$/;

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
