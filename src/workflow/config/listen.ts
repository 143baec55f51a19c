/**
 * Listen addresses in configuration: `host:port`, with IPv6 hosts in brackets
 * (`[::1]:7380`). Port 0 asks the operating system for a free port; the server prints the
 * port it bound. Decoded once here into a host and a numeric port.
 */

import type { Decoder } from "../../common/decode/index.ts";
import { describeValue, refuse } from "../../common/decode/index.ts";

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

const FORM = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/;

export function listenAddress(): Decoder<ListenAddress> {
  const expected = "listen address host:port";
  return {
    expected,
    run(value, path) {
      if (typeof value !== "string") {
        if (value === null) refuse("null", path, `null is not accepted; expected ${expected}`);
        refuse("type", path, `expected ${expected}, found ${describeValue(value)}`);
      }
      const match = FORM.exec(value);
      if (match === null) {
        refuse(
          "shape",
          path,
          `must be host:port (IPv6 in brackets), found ${JSON.stringify(value)}`,
        );
      }
      const port = Number(match[3]);
      if (port > 65535) refuse("range", path, `port must be between 0 and 65535, found ${port}`);
      return { host: match[1] ?? match[2]!, port };
    },
  };
}

/** The URL a client uses for an address the server bound. */
export function httpUrl(host: string, port: number): string {
  const shown = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${shown.includes(":") ? `[${shown}]` : shown}:${port}`;
}
