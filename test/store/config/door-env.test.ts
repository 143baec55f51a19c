import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DecodeError, U64_MAX } from "../../../src/common/decode/index.ts";
import { DOOR_ENV_DEFAULTS, decodeDoorEnv } from "../../../src/store/config/door-env.ts";
import type { DoorEnv } from "../../../src/store/config/types.ts";

const VARS = Object.keys(DOOR_ENV_DEFAULTS) as (keyof DoorEnv)[];
const MESSAGE = "the door configuration is not valid: ";

function refused(env: Record<string, string>): DecodeError {
  try {
    decodeDoorEnv(env);
  } catch (error) {
    assert.ok(error instanceof DecodeError);
    assert.equal(error.code, "door_config_invalid");
    return error;
  }
  return assert.fail("expected a refusal");
}

describe("door environment: defaults", () => {
  test("nothing set", () => {
    assert.deepEqual(decodeDoorEnv({}), DOOR_ENV_DEFAULTS);
  });
  test("other variables are ignored", () => {
    assert.deepEqual(decodeDoorEnv({ PATH: "/bin", SERVICE_OTHER: "x" }), DOOR_ENV_DEFAULTS);
  });
});

describe("door environment: each variable", () => {
  // The connect allowance may not exceed the whole request; test each variable with the
  // other side of that pair set out of the way.
  const room: Record<string, Record<string, string>> = {
    SERVICE_IDP_CONNECT_TIMEOUT_MS: { SERVICE_IDP_TIMEOUT_MS: "1000000000000" },
    SERVICE_IDP_TIMEOUT_MS: { SERVICE_IDP_CONNECT_TIMEOUT_MS: "1" },
  };
  const accepted: [string, bigint][] = [
    ["1", 1n],
    ["512", 512n],
    [" 42 ", 42n],
    ["1000000000", 1000000000n],
  ];
  const refusedValues = ["0", "-1", "1.5", "1e3", "abc", "", "18446744073709551616", "0x10"];
  for (const name of VARS) {
    for (const [text, value] of accepted) {
      test(`${name}=${JSON.stringify(text)} → ${value}`, () => {
        assert.equal(decodeDoorEnv({ ...room[name], [name]: text })[name], value);
      });
    }
    for (const text of refusedValues) {
      test(`${name}=${JSON.stringify(text)} is refused, naming the variable`, () => {
        const e = refused({ ...room[name], [name]: text });
        assert.equal(e.field, name);
        assert.ok(e.message.startsWith(`${MESSAGE}${name}: must be a positive integer`), e.message);
      });
    }
    if (name === "SERVICE_PENDING_SIGNINS") {
      test(`${name} at the usize maximum`, () => {
        assert.equal(decodeDoorEnv({ [name]: String(U64_MAX) })[name], U64_MAX);
      });
    } else {
      test(`${name} beyond the monotonic clock`, () => {
        const e = refused({ ...room[name], [name]: String(U64_MAX) });
        assert.equal(e.field, name);
        assert.equal(e.kind, "clock");
      });
    }
  }
});

describe("door environment: connect allowance within the whole request", () => {
  const rows: [string, string, boolean][] = [
    ["5000", "30000", true],
    ["30000", "30000", true],
    ["30001", "30000", false],
    ["5001", "5000", false],
    ["1", "1", true],
  ];
  for (const [connect, whole, ok] of rows) {
    test(`connect ${connect} ms, whole ${whole} ms`, () => {
      const env = { SERVICE_IDP_CONNECT_TIMEOUT_MS: connect, SERVICE_IDP_TIMEOUT_MS: whole };
      if (ok) assert.equal(decodeDoorEnv(env).SERVICE_IDP_CONNECT_TIMEOUT_MS, BigInt(connect));
      else {
        const e = refused(env);
        assert.equal(e.field, "SERVICE_IDP_CONNECT_TIMEOUT_MS");
        assert.match(e.message, /must not exceed SERVICE_IDP_TIMEOUT_MS/);
      }
    });
  }
  test("the default connect allowance against a lowered whole request", () => {
    const e = refused({ SERVICE_IDP_TIMEOUT_MS: "4999" });
    assert.equal(e.field, "SERVICE_IDP_CONNECT_TIMEOUT_MS");
  });
});
