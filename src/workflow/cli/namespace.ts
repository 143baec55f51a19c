/**
 * `skein namespace create|list|describe|delete`: namespace calls against a running server.
 * `create NAME` says whether it was created now or existed; `list` names the namespaces the
 * bearer may see (`--records`: with their settings); `describe NAME` adds what one holds
 * (runs by status, definitions); `delete NAME` deletes an empty one (refused while it has
 * runs).
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { request } from "./client.ts";
import { reportRefusal } from "./hints.ts";
import { CLIENT_HELP, clientOf, clientOptions, outputMode } from "./options.ts";
import { cell, emit, emitLines, fields, table } from "./output.ts";

interface NamespaceRecord {
  name: string;
  created_at: string;
  created_by: string;
  settings: { max_in_flight_activities: number; ceiling_in_force: boolean };
}

const VERBS = ["create", "list", "describe", "delete"];

const path = (name: string) => encodeURIComponent(name.trim());

export const namespaceCommand: Command = {
  name: "namespace",
  summary: "create, list, describe and delete namespaces on a running server",
  verbs: VERBS,
  help: [
    "create NAME [-s URL] [-t TOKEN] [-o text|json]",
    "       skein namespace list [--records] …",
    "       skein namespace describe NAME …",
    "       skein namespace delete NAME …",
    "",
    CLIENT_HELP,
    "  --records            list full records with their settings",
    "  delete: refused while the namespace has runs; its definitions go with it",
  ].join("\n"),
  async run(args, io) {
    const [verb, ...rest] = args;
    if (verb === undefined || !VERBS.includes(verb)) {
      throw new UsageError(`expected one of ${VERBS.join(", ")}, found ${verb ?? "nothing"}`);
    }
    try {
      if (verb === "list") {
        const { values } = parseOptions(
          rest,
          { ...clientOptions, records: { type: "boolean" } },
          { max: 0 },
        );
        const mode = outputMode(values.output);
        const client = clientOf(values);
        if (values.records === true) {
          const r = (await request(client, "GET", "/namespaces/records")) as {
            records: NamespaceRecord[];
          };
          emitLines(io, mode, r.records, () =>
            table(
              ["NAME", "CREATED", "BY", "MAX IN FLIGHT", "CEILING IN FORCE"],
              r.records.map((n) => [
                n.name,
                n.created_at,
                n.created_by,
                String(n.settings.max_in_flight_activities),
                String(n.settings.ceiling_in_force),
              ]),
            ),
          );
        } else {
          const r = (await request(client, "GET", "/namespaces")) as {
            namespaces: { name: string }[];
          };
          emitLines(io, mode, r.namespaces, () => r.namespaces.map((n) => n.name).join("\n"));
        }
        return 0;
      }
      const { values, positionals } = parseOptions(rest, clientOptions, { min: 1, max: 1 });
      const mode = outputMode(values.output);
      const client = clientOf(values);
      const name = positionals[0]!;
      if (verb === "create") {
        const r = (await request(client, "POST", "/namespaces", { name })) as {
          name: string;
          created: boolean;
        };
        emit(io, mode, r, () =>
          r.created ? `created namespace ${r.name}` : `namespace ${r.name} already exists`,
        );
      } else if (verb === "describe") {
        const r = (await request(
          client,
          "GET",
          `/namespaces/records/${path(name)}`,
        )) as NamespaceRecord & { runs: Record<string, number>; definitions: number };
        emit(io, mode, r, () =>
          fields([
            ["name", r.name],
            ["created", `${r.created_at} by ${r.created_by}`],
            ["max in flight", r.settings.max_in_flight_activities],
            ["ceiling in force", r.settings.ceiling_in_force],
            ["definitions", r.definitions],
            [
              "runs",
              Object.keys(r.runs).length === 0
                ? "none"
                : Object.entries(r.runs)
                    .map(([status, n]) => `${status} ${cell(n)}`)
                    .join(", "),
            ],
          ]),
        );
      } else {
        const r = (await request(client, "DELETE", `/namespaces/${path(name)}`)) as {
          record: NamespaceRecord;
          definitions_deleted: number;
        };
        emit(
          io,
          mode,
          r,
          () =>
            `deleted namespace ${r.record.name} (and ${r.definitions_deleted} definition version${Number(r.definitions_deleted) === 1 ? "" : "s"})`,
        );
      }
      return 0;
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      return reportRefusal(io, error);
    }
  },
};
