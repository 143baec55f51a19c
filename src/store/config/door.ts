/**
 * The door file: the browser gateway's configuration. Every top-level field but
 * `timeout_ms` and `max_connections` is required, and so is every member of `idp`. The door
 * listens on a numeric loopback address behind a TLS proxy, answers for one canonical HTTPS
 * origin whose `/callback` is the only redirect, serves the console from an absolute folder
 * and lists the store sockets it may reach. Every refusal reads "the door configuration is
 * not valid: <field>: <reason>".
 */

import {
  absolutePath,
  child,
  type Decoder,
  describeValue,
  durationMs,
  object,
  type Path,
  refuse,
  string,
  stringMap,
  usize,
  withDefault,
} from "../../common/decode/index.ts";
import { DOOR_CONFIG_INVALID, DOOR_CONFIG_MESSAGE, withContext } from "../errors.ts";
import { type ListenAddress, parseCanonicalOrigin, parseLoopbackListen } from "./addresses.ts";
import { DOOR_CALLBACK_PATH } from "./limits.ts";
import type { DoorConfig } from "./types.ts";

export const DOOR_DEFAULTS = { timeout_ms: 30000n, max_connections: 64n } as const;

function stringInput(value: unknown, path: Path, expected: string): string {
  if (typeof value === "string") return value;
  if (value === null) refuse("null", path, `null is not accepted; expected ${expected}`);
  return refuse("type", path, `expected ${expected}, found ${describeValue(value)}`);
}

const listen: Decoder<ListenAddress> = {
  expected: "loopback socket address string",
  run(value, path) {
    const text = stringInput(value, path, this.expected);
    const parsed = parseLoopbackListen(text);
    if (!parsed.ok) {
      refuse(
        "shape",
        path,
        `listen must be a loopback address behind a TLS proxy (${JSON.stringify(text)} ${parsed.reason})`,
      );
    }
    return parsed.value;
  },
};

const origin: Decoder<string> = {
  expected: "https origin string",
  run(value, path) {
    const text = stringInput(value, path, this.expected);
    const parsed = parseCanonicalOrigin(text);
    const reason = !parsed.ok
      ? parsed.reason
      : parsed.value.scheme !== "https"
        ? "must use https"
        : undefined;
    if (reason !== undefined) {
      refuse(
        "shape",
        path,
        `origin must be an https origin with no path (${JSON.stringify(text)} ${reason})`,
      );
    }
    return text;
  },
};

const STORE_KEY = /^[A-Za-z0-9_-]+$/;

const storeKey: Decoder<string> = {
  expected: "store name",
  run(value, path) {
    const text = value as string;
    if (!STORE_KEY.test(text)) {
      refuse("shape", path, "store names use ASCII letters, digits, - or _");
    }
    return text;
  },
};

const issuer: Decoder<string> = {
  expected: "http or https address string",
  run(value, path) {
    const text = stringInput(value, path, this.expected);
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return refuse("shape", path, "idp issuer is not an address");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      refuse("shape", path, "idp issuer must be an http or https address");
    }
    if (url.hostname === "") refuse("shape", path, "idp issuer is not an address");
    return text;
  },
};

// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule is about control characters
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const clientId = string({ minBytes: 1 });
const clientIdDecoder: Decoder<string> = {
  expected: "client id string",
  run(value, path) {
    const text = stringInput(value, path, this.expected);
    if (text.length === 0 || CONTROL.test(text)) {
      refuse("shape", path, "client_id must be a name with no control character");
    }
    return clientId.run(text, path);
  },
};

const doorObject = object(
  {
    listen,
    origin,
    files: absolutePath({ reason: "files must be an absolute folder" }),
    stores: stringMap(absolutePath({ reason: "socket must be an absolute path" }), {
      min: 1,
      key: storeKey,
    }),
    timeout_ms: withDefault(durationMs(), DOOR_DEFAULTS.timeout_ms),
    max_connections: withDefault(usize({ min: 1 }), DOOR_DEFAULTS.max_connections),
    idp: object({
      issuer,
      client_id: clientIdDecoder,
      secret_file: absolutePath({ reason: "secret_file must be an absolute path" }),
      redirect: string(),
    }),
  },
  {
    check(door, path) {
      const expected = `${door.origin}${DOOR_CALLBACK_PATH}`;
      if (door.idp.redirect !== expected) {
        refuse(
          "rule",
          child(child(path, "idp"), "redirect"),
          `must equal origin followed by ${DOOR_CALLBACK_PATH} (${JSON.stringify(expected)})`,
        );
      }
    },
  },
);

export const doorFile: Decoder<DoorConfig> = withContext(doorObject, {
  prefix: DOOR_CONFIG_MESSAGE,
  code: DOOR_CONFIG_INVALID,
});
