/**
 * The service file's `idp` object: where the identity provider is and which database the
 * store's collections and branches are placed under. The issuer is an origin only; a URL
 * with an API mount or path is `idp_origin_required`, an address that is not an HTTP(S)
 * origin at all is `endpoint_refused`, and one that breaks the origin contract
 * (credentials, query, fragment, non-canonical form) is `contract_refused`. The placement
 * credential file is checked when `serve` starts, not while decoding.
 */

import {
  absolutePath,
  type Decoder,
  describeValue,
  map,
  nullable,
  object,
  optional,
  refuse,
  string,
} from "../../common/decode/index.ts";
import { parseCanonicalOrigin } from "./addresses.ts";
import type { StoreIdpSettings } from "./types.ts";

export const IDP_ORIGIN_REQUIRED = "idp_origin_required";
export const ENDPOINT_REFUSED = "endpoint_refused";
export const CONTRACT_REFUSED = "contract_refused";

const issuer: Decoder<string> = {
  expected: "http or https origin string",
  run(value, path) {
    if (typeof value !== "string") {
      if (value === null) refuse("null", path, "null is not accepted; expected origin string");
      refuse("type", path, `expected origin string, found ${describeValue(value)}`);
    }
    const parsed = parseCanonicalOrigin(value);
    if (!parsed.ok) {
      const code =
        parsed.problem === "path"
          ? IDP_ORIGIN_REQUIRED
          : parsed.problem === "syntax" || parsed.problem === "scheme"
            ? ENDPOINT_REFUSED
            : CONTRACT_REFUSED;
      refuse("shape", path, `${code}: ${parsed.reason}`, code);
    }
    if (parsed.value.scheme !== "http" && parsed.value.scheme !== "https") {
      refuse("shape", path, `${ENDPOINT_REFUSED}: must use http or https`, ENDPOINT_REFUSED);
    }
    return value;
  },
};

export const idp: Decoder<StoreIdpSettings> = map(
  object({
    issuer,
    database: string({
      pattern: /^[A-Za-z0-9_-]+$/,
      patternReason: "database id must be letters, digits, _ or - only",
    }),
    placement_credential_file: optional(nullable(absolutePath())),
  }),
  (i) => ({ ...i, placement_credential_file: i.placement_credential_file ?? null }),
);
