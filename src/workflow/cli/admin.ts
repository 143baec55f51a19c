/**
 * `skein admin backup PATH`: asks the running server for an online backup of its SQLite
 * database, written by the server to PATH on its host (`POST /admin/backup`). PATH is made
 * absolute here, against this shell's directory, so it means what the operator typed when
 * the server runs on the same host. Needs a bearer granted every namespace (the admin
 * token). Prints the file, its size and the pages copied.
 */

import { resolve } from "node:path";
import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { request } from "./client.ts";
import { bearer, clientOptions, serverUrl } from "./options.ts";

export const adminCommand: Command = {
  name: "admin",
  summary: "operator actions on a running server (backup)",
  help: [
    "backup PATH [--server URL] [--token TOKEN]",
    "",
    "  backup PATH     copy the server's SQLite database, online, to PATH (must not exist)",
    "  --server URL    the server (default SKEIN_SERVER, else http://127.0.0.1:7380)",
    "  --token TOKEN   a bearer granted every namespace (default SKEIN_TOKEN)",
    "",
    "PostgreSQL storage is backed up with pg_dump (docs/operations.md, Backups).",
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    if (verb !== "backup") {
      throw new UsageError(`expected "admin backup PATH", found ${verb ?? "nothing"}`);
    }
    const { values, positionals } = parseOptions(rest, clientOptions, { min: 1, max: 1 });
    const client = { server: serverUrl(values.server), token: bearer(values.token) };
    try {
      const r = (await request(client, "POST", "/admin/backup", {
        path: resolve(positionals[0]!),
      })) as { path: string; bytes: number; pages: number };
      io.out(`backup written: ${r.path} (${r.bytes} bytes, ${r.pages} pages)`);
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      io.err(`skein: ${error.message}`);
      return 1;
    }
  },
};
