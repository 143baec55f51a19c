/**
 * The development identity provider's catalogue of refusals. Every refusal a caller can see
 * (an HTTP error body `{"error":{"code","message"}}`, a CLI line) is declared here once with
 * its HTTP status; docs/identity.md lists them. A denial by the policy is never an error: it
 * is `decision: false` (AuthZEN), so nothing here means "not allowed to do X in the store".
 */

import { SkeinError } from "../common/errors.ts";

export const IDP_REFUSALS = {
  // Callers of the evaluation and placement APIs (the PEP failing to authenticate).
  unauthenticated: {
    status: 401,
    text: "a bearer access token issued by this provider is required",
  },
  invalid_token: {
    status: 401,
    text: "the bearer token is not a valid access token of this provider",
  },
  subject_not_caller: { status: 403, text: "a pass may ask only about its own subject" },
  resource_outside_database: {
    status: 403,
    text: "the caller may ask only about resources of its own database",
  },
  app_credential_required: {
    status: 403,
    text: "only the app client of the database may change its placements",
  },
  placement_frozen: {
    status: 409,
    text: "the operator has frozen new placements under this database (skein-idp placement thaw)",
  },
  // Requests.
  invalid_request: {
    status: 400,
    text: "the request does not decode (the message names the field)",
  },
  body_too_large: { status: 413, text: "the request body is larger than this endpoint accepts" },
  unsupported_media_type: { status: 415, text: "the request body must be application/json" },
  not_found: { status: 404, text: "no such endpoint" },
  method_not_allowed: { status: 405, text: "the endpoint does not take that method" },
  // State and files.
  user_exists: { status: 409, text: "a user by that name already exists" },
  group_exists: { status: 409, text: "a group by that name already exists" },
  client_exists: { status: 409, text: "a client by that id already exists" },
  unknown_subject: { status: 404, text: "no user, client or group by that name" },
  unknown_group: { status: 404, text: "no group by that name" },
  invalid_resource: { status: 400, text: "a grant resource must be db/D[/c/C[/b/B[/p/PREFIX]]]" },
  secret_file_invalid: { status: 400, text: "the password or secret file is not usable" },
  data_dir_unusable: { status: 500, text: "the data directory cannot be used" },
  keys_unusable: { status: 500, text: "the signing key file cannot be used" },
  schema_too_new: { status: 500, text: "the database was written by a newer skein-idp" },
  internal_error: { status: 500, text: "the identity provider failed to carry out the request" },
} as const;

export type IdpRefusalCode = keyof typeof IDP_REFUSALS;

export function idpError(code: IdpRefusalCode, message?: string, cause?: unknown): SkeinError {
  const entry = IDP_REFUSALS[code];
  return new SkeinError(code, message ?? entry.text, { status: entry.status, cause });
}
