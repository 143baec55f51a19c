/**
 * The management commands: `user add`, `group add`, `group member`, `client add`, `grant`
 * and `revoke`. Each opens the data directory's SQLite file (the server may be running),
 * makes one change and prints one JSON line saying what changed; `client add` prints the
 * generated client secret instead, once. Secrets come from files (`--password-file`,
 * `--secret-file`), never from the command line, and are stored only as scrypt hashes.
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { MIN_PASSWORD_BYTES } from "../bounds.ts";
import { idpError } from "../errors.ts";
import {
  isDatabaseName,
  isPrincipalName,
  LEVELS,
  type LevelName,
  PRINCIPAL_RULE,
  parseGrantResource,
} from "../names.ts";
import { generateSecret, hashSecret, readSecretFile } from "../secrets.ts";
import type { Grant } from "../state/state.ts";
import { dataDirOf, dataDirOption, reportRefusals, subcommand, withState } from "./shared.ts";

function principal(name: string, what: string): string {
  if (!isPrincipalName(name)) throw new UsageError(`${what} must be ${PRINCIPAL_RULE}`);
  return name;
}

export const userCommand: Command = {
  name: "user",
  summary: "add a local user (for the login page)",
  help: "add --data-dir DIR NAME --password-file FILE\n",
  run: (args, io) =>
    reportRefusals("user", io, async () => {
      const { values, positionals } = parseOptions(
        args,
        { ...dataDirOption, "password-file": { type: "string" } },
        { min: 2, max: 2 },
      );
      subcommand(positionals, ["add"]);
      const dataDir = dataDirOf(values);
      const name = principal(positionals[1]!, "NAME");
      const file = values["password-file"];
      if (file === undefined) throw new UsageError("--password-file FILE is required");
      const hash = await hashSecret(readSecretFile(file, MIN_PASSWORD_BYTES));
      withState(dataDir, (state) => state.addUser(name, hash));
      io.out(JSON.stringify({ user: name, created: true }));
      return 0;
    }),
};

export const groupCommand: Command = {
  name: "group",
  summary: "add a group, or a member to a group",
  help: "add --data-dir DIR GROUP\n       member --data-dir DIR GROUP NAME|user:NAME|client:ID\n",
  run: (args, io) =>
    reportRefusals("group", io, async () => {
      const { values, positionals } = parseOptions(args, dataDirOption, { min: 2, max: 3 });
      const word = subcommand(positionals, ["add", "member"]);
      const dataDir = dataDirOf(values);
      const group = principal(positionals[1]!, "GROUP");
      if (word === "add") {
        if (positionals.length !== 2) throw new UsageError("group add takes one GROUP");
        withState(dataDir, (state) => state.addGroup(group));
        io.out(JSON.stringify({ group, created: true }));
        return 0;
      }
      const raw = positionals[2];
      if (raw === undefined) throw new UsageError("group member takes GROUP and NAME");
      const member = memberSubject(raw);
      const added = withState(dataDir, (state) => {
        if (!state.subjectExists(member)) throw idpError("unknown_subject", `no ${member}`);
        return state.addMember(group, member);
      });
      io.out(JSON.stringify({ group, member, added }));
      return 0;
    }),
};

function memberSubject(raw: string): string {
  const colon = raw.indexOf(":");
  const kind = colon < 0 ? "user" : raw.slice(0, colon);
  const name = colon < 0 ? raw : raw.slice(colon + 1);
  if (kind !== "user" && kind !== "client") {
    throw new UsageError("a member is NAME, user:NAME or client:ID");
  }
  return `${kind}:${principal(name, "the member name")}`;
}

function redirectUri(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError("--redirect must be an absolute http or https URI");
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hash !== "") {
    throw new UsageError("--redirect must be an absolute http or https URI without a fragment");
  }
  return text;
}

export const clientCommand: Command = {
  name: "client",
  summary: "add a client (prints its secret once)",
  help: "add --data-dir DIR CLIENT_ID [--redirect URI]... [--app DATABASE] [--secret-file FILE]\n\n  --redirect URI     allow the authorization code flow back to URI (repeatable)\n  --app DATABASE     the store's app client of DATABASE (placement, asking about anyone)\n  --secret-file FILE set the secret from FILE instead of generating and printing one\n",
  run: (args, io) =>
    reportRefusals("client", io, async () => {
      const { values, positionals } = parseOptions(
        args,
        {
          ...dataDirOption,
          redirect: { type: "string", multiple: true },
          app: { type: "string" },
          "secret-file": { type: "string" },
        },
        { min: 2, max: 2 },
      );
      subcommand(positionals, ["add"]);
      const dataDir = dataDirOf(values);
      const id = principal(positionals[1]!, "CLIENT_ID");
      const app = values.app;
      if (app !== undefined && !isDatabaseName(app)) {
        throw new UsageError("--app DATABASE must be letters, digits, _ or -");
      }
      const redirectUris = (values.redirect ?? []).map(redirectUri);
      const file = values["secret-file"];
      const secret = file === undefined ? generateSecret() : readSecretFile(file);
      const secretHash = await hashSecret(secret);
      withState(dataDir, (state) =>
        state.addClient({ id, secretHash, redirectUris, appDatabase: app }),
      );
      io.out(file === undefined ? secret : JSON.stringify({ client: id, created: true }));
      return 0;
    }),
};

const grantOptions = {
  ...dataDirOption,
  subject: { type: "string" },
  action: { type: "string" },
  resource: { type: "string" },
} as const;

function grantOf(values: {
  subject?: string | undefined;
  action?: string | undefined;
  resource?: string | undefined;
}): Grant {
  const { subject, action, resource } = values;
  if (subject === undefined || action === undefined || resource === undefined) {
    throw new UsageError("--subject, --action and --resource are required");
  }
  const colon = subject.indexOf(":");
  const kind = subject.slice(0, colon);
  if (colon < 0 || !["user", "client", "group"].includes(kind)) {
    throw new UsageError("--subject must be user:NAME, client:ID or group:NAME");
  }
  principal(subject.slice(colon + 1), "the subject name");
  if (!Object.hasOwn(LEVELS, action)) throw new UsageError("--action must be read, write or admin");
  return { subject, level: LEVELS[action as LevelName], scope: parseGrantResource(resource) };
}

export const grantCommand: Command = {
  name: "grant",
  summary: "grant a subject read, write or admin on a resource",
  help: "--data-dir DIR --subject user:NAME|client:ID|group:NAME --action read|write|admin --resource db/D[/c/C[/b/B[/p/PREFIX]]]\n",
  run: (args, io) =>
    reportRefusals("grant", io, async () => {
      const { values } = parseOptions(args, grantOptions, { max: 0 });
      const dataDir = dataDirOf(values);
      const grant = grantOf(values);
      const created = withState(dataDir, (state) => {
        if (!state.subjectExists(grant.subject)) {
          throw idpError("unknown_subject", `no ${grant.subject}`);
        }
        return state.grant(grant);
      });
      io.out(JSON.stringify({ granted: true, created }));
      return 0;
    }),
};

export const revokeCommand: Command = {
  name: "revoke",
  summary: "remove exactly the grant that grant made",
  help: "--data-dir DIR --subject user:NAME|client:ID|group:NAME --action read|write|admin --resource db/D[/c/C[/b/B[/p/PREFIX]]]\n",
  run: (args, io) =>
    reportRefusals("revoke", io, async () => {
      const { values } = parseOptions(args, grantOptions, { max: 0 });
      const dataDir = dataDirOf(values);
      const grant = grantOf(values);
      const revoked = withState(dataDir, (state) => state.revoke(grant));
      io.out(JSON.stringify({ revoked }));
      return 0;
    }),
};
