/**
 * The door's environment variables. Each is a positive integer with a default; an invalid
 * value names the variable and asks for a positive integer. The connect allowance must not
 * exceed the whole-request allowance. Only the four `SERVICE_` variables below are read;
 * refusals read like the door file's ("the door configuration is not valid: …").
 */

import {
  child,
  DecodeError,
  type Decoder,
  durationMs,
  durationSeconds,
  envValue,
  object,
  type Path,
  refuse,
  usize,
  withDefault,
} from "../../common/decode/index.ts";
import { DOOR_CONFIG_INVALID, DOOR_CONFIG_MESSAGE, rewrite, withContext } from "../errors.ts";
import type { DoorEnv } from "./types.ts";

export const DOOR_ENV_DEFAULTS: DoorEnv = {
  SERVICE_PENDING_SIGNINS: 512n,
  SERVICE_SESSION_SECONDS: 43200n,
  SERVICE_IDP_CONNECT_TIMEOUT_MS: 5000n,
  SERVICE_IDP_TIMEOUT_MS: 30000n,
};

export const DOOR_ENV_NAMES = Object.keys(DOOR_ENV_DEFAULTS) as (keyof DoorEnv)[];

/** Any refusal of a variable reads "must be a positive integer (<why>)". */
function positive(inner: Decoder<bigint>): Decoder<bigint> {
  return {
    expected: inner.expected,
    run(value: unknown, path: Path) {
      try {
        return inner.run(value, path);
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error;
        throw rewrite(error, `${error.field}: must be a positive integer (${error.reason})`);
      }
    },
  };
}

const envObject = object(
  {
    SERVICE_PENDING_SIGNINS: withDefault(
      positive(usize({ min: 1 })),
      DOOR_ENV_DEFAULTS.SERVICE_PENDING_SIGNINS,
    ),
    SERVICE_SESSION_SECONDS: withDefault(
      positive(durationSeconds()),
      DOOR_ENV_DEFAULTS.SERVICE_SESSION_SECONDS,
    ),
    SERVICE_IDP_CONNECT_TIMEOUT_MS: withDefault(
      positive(durationMs()),
      DOOR_ENV_DEFAULTS.SERVICE_IDP_CONNECT_TIMEOUT_MS,
    ),
    SERVICE_IDP_TIMEOUT_MS: withDefault(
      positive(durationMs()),
      DOOR_ENV_DEFAULTS.SERVICE_IDP_TIMEOUT_MS,
    ),
  },
  {
    check(env, path) {
      if (env.SERVICE_IDP_CONNECT_TIMEOUT_MS > env.SERVICE_IDP_TIMEOUT_MS) {
        refuse(
          "rule",
          child(path, "SERVICE_IDP_CONNECT_TIMEOUT_MS"),
          `must not exceed SERVICE_IDP_TIMEOUT_MS (${env.SERVICE_IDP_TIMEOUT_MS}), found ${env.SERVICE_IDP_CONNECT_TIMEOUT_MS}`,
        );
      }
    },
  },
);

const doorEnvDecoder = withContext(envObject, {
  prefix: DOOR_CONFIG_MESSAGE,
  code: DOOR_CONFIG_INVALID,
});

/** Picks the door's variables out of an environment and decodes them. Throws DecodeError. */
export function decodeDoorEnv(env: Readonly<Record<string, string | undefined>>): DoorEnv {
  const raw: Record<string, unknown> = {};
  for (const name of DOOR_ENV_NAMES) {
    const text = env[name];
    if (text !== undefined) raw[name] = envValue(text);
  }
  return doorEnvDecoder.run(raw, undefined);
}
