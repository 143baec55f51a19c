/**
 * What a client command prints when the server (or the network) refuses it: the code and
 * message, then a hint naming the `skein` command that helps, never an HTTP route: the
 * person at the terminal speaks CLI.
 */

import type { Io } from "../../common/cli.ts";
import type { SkeinError } from "../../common/errors.ts";

const HINTS: Readonly<Record<string, string>> = {
  server_unreachable:
    "is the server running (`skein serve`)? Point at it with --server URL or SKEIN_SERVER",
  unauthenticated:
    "pass a token with --token or SKEIN_TOKEN: the admin token is in the data directory's " +
    "admin.token, others come from `skein token issue`",
  forbidden: "issue a token with that grant: `skein token issue --subject S --namespace N`",
  namespace_not_found: "create it with `skein namespace create NAME`; see `skein namespace list`",
  namespace_required: "name one with --namespace N or SKEIN_NAMESPACE",
  namespace_not_empty: "its runs keep it: see `skein workflow list --namespace N`",
  definition_not_found:
    "register it with `skein workflow register FILE`; see `skein workflow definitions`",
  run_not_found: "see `skein workflow list` (and --namespace N)",
  route_not_found: "the server may be older than this client: compare with `skein version`",
  deployments_disabled: "set deployments.enabled = true in the server's skein.toml",
};

/** The hint for a refusal code, when there is one. */
export function hintFor(code: string): string | undefined {
  return HINTS[code];
}

/** Prints a refusal and its hint on stderr; the command then exits 1. */
export function reportRefusal(io: Io, error: SkeinError): number {
  io.err(`skein: ${error.message}`);
  const hint = hintFor(error.code);
  if (hint !== undefined) io.err(`hint: ${hint}`);
  return 1;
}
