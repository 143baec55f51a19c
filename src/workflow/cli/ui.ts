/**
 * `skein ui`: prints a sign-in link to the run console (`/ui`, docs/ui.md) carrying a fresh,
 * short-lived bearer signed with the server's key (read from the data directory the
 * configuration names, as `skein token issue` does). The token rides in the URL's fragment
 * (`#token=…`), which a browser never sends to a server, so it is in no access log; the page
 * moves it into the tab's session storage and removes it from the address bar. Grants:
 * `--namespace N` (repeatable) or `--all-namespaces` (the default when neither is given);
 * lifetime `--ttl` (default 15m); the server's address `--server` (default: the
 * configuration's `http.listen`).
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { loadSigningKey } from "../auth/keys.ts";
import { issueToken } from "../auth/tokens.ts";
import { httpUrl } from "../config/listen.ts";
import { DEFAULT_CONFIG_FILE, loadConfig } from "../config/load.ts";
import { parseTtl } from "./token.ts";

/** A sign-in link is for a person about to click it: minutes, not days. */
export const UI_TOKEN_TTL_DEFAULT = "15m";

const options = {
  config: { type: "string" },
  server: { type: "string", short: "s" },
  subject: { type: "string" },
  namespace: { type: "string", multiple: true },
  "all-namespaces": { type: "boolean" },
  ttl: { type: "string" },
} as const;

/** The console's sign-in URL for `server` with `token` in the fragment. */
export function signInLink(server: string, token: string): string {
  return `${server.replace(/\/+$/, "")}/ui/#token=${encodeURIComponent(token)}`;
}

export const uiCommand: Command = {
  name: "ui",
  summary: "print a short-lived sign-in link to the run console",
  help: [
    "[--namespace N]... [--all-namespaces] [--subject S] [--ttl DUR] [--server URL] [--config FILE]",
    "",
    "  --namespace N       the console sees namespace N only (repeat for more)",
    "  --all-namespaces    every namespace (the default without --namespace)",
    "  --subject S         who signs in, recorded on their controls (default: $USER, else console)",
    `  --ttl DUR           the token's lifetime: 90s, 30m, 12h (default ${UI_TOKEN_TTL_DEFAULT})`,
    "  -s, --server URL    the server's address as the browser reaches it (default: http.listen)",
    `  --config FILE       the server's configuration (default ./${DEFAULT_CONFIG_FILE})`,
  ].join("\n"),
  async run(args, io) {
    const { values } = parseOptions(args, options, { max: 0 });
    const names = (values.namespace ?? []).map((n) => n.trim());
    if (names.some((n) => n === "")) throw new UsageError("--namespace must not be empty");
    if (values["all-namespaces"] === true && names.length > 0) {
      throw new UsageError("--all-namespaces and --namespace exclude each other");
    }
    const subject = (values.subject ?? process.env.USER ?? "console").trim() || "console";
    const ttlSeconds = parseTtl(values.ttl ?? UI_TOKEN_TTL_DEFAULT);
    if (values.server !== undefined && !/^https?:\/\/[^/]+/.test(values.server)) {
      throw new UsageError(
        `--server must be an http(s) URL, found ${JSON.stringify(values.server)}`,
      );
    }
    try {
      const config = await loadConfig(values.config ?? DEFAULT_CONFIG_FILE);
      const key = await loadSigningKey(config.dataDir);
      const token = await issueToken(key.privateKey, {
        subject,
        namespaces: names.length === 0 ? "*" : names,
        ttlSeconds,
      });
      const listen = config.settings.http.listen;
      io.out(signInLink(values.server ?? httpUrl(listen.host, listen.port), token));
      io.err(`skein: the link signs in as ${subject} for ${ttlSeconds} s; keep it private`);
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      io.err(`skein: ${error.message}`);
      return 1;
    }
  },
};
