/**
 * `skein namespace create NAME` and `skein namespace list [--records]`: namespace calls
 * against a running server (`--server URL` or SKEIN_SERVER; `--token` or SKEIN_TOKEN).
 * `create` prints whether the namespace was created now or already existed; `list` prints
 * one name per line, or with `--records` one JSON record per line.
 */

import { stringify } from "lossless-json";
import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { request } from "./client.ts";
import { bearer, clientOptions, serverUrl } from "./options.ts";

export const namespaceCommand: Command = {
  name: "namespace",
  summary: "create and list namespaces on a running server",
  help: [
    "create NAME [--server URL] [--token TOKEN]",
    "       skein namespace list [--records] [--server URL] [--token TOKEN]",
    "",
    "  --server URL    the server (default SKEIN_SERVER, else http://127.0.0.1:7380)",
    "  --token TOKEN   the bearer (default SKEIN_TOKEN)",
    "  --records       list full records with their settings, as JSON lines",
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    try {
      if (verb === "create") {
        const { values, positionals } = parseOptions(rest, clientOptions, { min: 1, max: 1 });
        const client = { server: serverUrl(values.server), token: bearer(values.token) };
        const r = (await request(client, "POST", "/namespaces", { name: positionals[0] })) as {
          name: string;
          created: boolean;
        };
        io.out(r.created ? `created namespace ${r.name}` : `namespace ${r.name} already exists`);
        return 0;
      }
      if (verb === "list") {
        const { values } = parseOptions(
          rest,
          { ...clientOptions, records: { type: "boolean" } },
          { max: 0 },
        );
        const client = { server: serverUrl(values.server), token: bearer(values.token) };
        if (values.records === true) {
          const r = (await request(client, "GET", "/namespaces/records")) as { records: unknown[] };
          for (const record of r.records) io.out(stringify(record) ?? "null");
        } else {
          const r = (await request(client, "GET", "/namespaces")) as {
            namespaces: { name: string }[];
          };
          for (const ns of r.namespaces) io.out(ns.name);
        }
        return 0;
      }
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      io.err(`skein: ${error.message}`);
      return 1;
    }
    throw new UsageError(
      `expected "namespace create" or "namespace list", found ${verb ?? "nothing"}`,
    );
  },
};
