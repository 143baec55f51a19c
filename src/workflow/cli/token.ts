/**
 * `skein token issue`: prints a bearer token signed with the server's key (read from the
 * data directory named by the configuration). Grants: `--namespace N` (repeatable) or
 * `--all-namespaces`, `--deploy`, `--worker`; lifetime `--ttl` (`90s`, `30m`, `12h`, `7d`;
 * default 24h).
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { loadSigningKey } from "../auth/keys.ts";
import { issueToken } from "../auth/tokens.ts";
import { DEFAULT_CONFIG_FILE, loadConfig } from "../config/load.ts";

const UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };
/** Ten years: longer lifetimes are almost certainly a typo. */
const MAX_TTL_SECONDS = 10 * 365 * 86400;

export function parseTtl(text: string): number {
  const match = /^([1-9][0-9]*)([smhd])$/.exec(text);
  if (match === null) {
    throw new UsageError(`--ttl must be a count and a unit (90s, 30m, 12h, 7d), found ${text}`);
  }
  const seconds = Number(match[1]) * UNITS[match[2]!]!;
  if (seconds > MAX_TTL_SECONDS) throw new UsageError(`--ttl must be at most 3650d`);
  return seconds;
}

const issue = {
  config: { type: "string" },
  subject: { type: "string" },
  namespace: { type: "string", multiple: true },
  "all-namespaces": { type: "boolean" },
  deploy: { type: "boolean" },
  worker: { type: "boolean" },
  ttl: { type: "string" },
} as const;

export const tokenCommand: Command = {
  name: "token",
  summary: "issue bearer tokens",
  help: [
    "issue --subject S [--namespace N]... [--all-namespaces] [--deploy] [--worker] [--ttl DUR] [--config FILE]",
    "",
    "  --subject S         who the token is for (recorded on what it creates)",
    "  --namespace N       grant namespace N (repeat for more)",
    "  --all-namespaces    grant every namespace",
    "  --deploy            may manage worker deployments",
    "  --worker            may connect as a worker",
    "  --ttl DUR           lifetime: 90s, 30m, 12h, 7d (default 24h)",
    `  --config FILE       the server's configuration (default ./${DEFAULT_CONFIG_FILE})`,
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    if (verb !== "issue")
      throw new UsageError(`expected "token issue", found ${verb ?? "nothing"}`);
    const { values } = parseOptions(rest, issue, { max: 0 });
    const subject = values.subject?.trim();
    if (subject === undefined || subject === "") throw new UsageError("--subject is required");
    const names = (values.namespace ?? []).map((n) => n.trim());
    if (names.some((n) => n === "")) throw new UsageError("--namespace must not be empty");
    if (values["all-namespaces"] === true && names.length > 0) {
      throw new UsageError("--all-namespaces and --namespace exclude each other");
    }
    const ttlSeconds = parseTtl(values.ttl ?? "24h");
    try {
      const config = await loadConfig(values.config ?? DEFAULT_CONFIG_FILE);
      const key = await loadSigningKey(config.dataDir);
      const token = await issueToken(key.privateKey, {
        subject,
        namespaces: values["all-namespaces"] === true ? "*" : names,
        deploy: values.deploy === true,
        worker: values.worker === true,
        ttlSeconds,
      });
      io.out(token);
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      io.err(`skein: ${error.message}`);
      return 1;
    }
  },
};
