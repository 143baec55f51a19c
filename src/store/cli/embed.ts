/**
 * `skein-store embed`: the embedding verbs from the command line. `enable COLLECTION
 * FIELD` binds a field, `status COLLECTION` prints the walk's progress, `texts TEXT...`
 * prints vectors (`--question` embeds them as questions). See docs/embeddings.md.
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { callVerb, socketOption } from "./call.ts";

export const embedCommand: Command = {
  name: "embed",
  summary: "embedded fields and vectors (embed enable|status|texts)",
  help: "(--socket PATH | --store NAME) [enable COLLECTION FIELD | status COLLECTION | texts [--question] TEXT...]",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...socketOption, question: { type: "boolean" } },
      { min: 2 },
    );
    const [action, ...rest] = positionals;
    if (action === "enable" && rest.length === 2) {
      return callVerb(io, values, "embed.enable", { collection: rest[0], field: rest[1] });
    }
    if (action === "status" && rest.length === 1) {
      return callVerb(io, values, "embed.status", { collection: rest[0] });
    }
    if (action === "texts" && rest.length >= 1) {
      const kind = values.question === true ? "question" : "document";
      return callVerb(io, values, "embed.texts", { texts: rest, kind });
    }
    throw new UsageError("expected enable COLLECTION FIELD, status COLLECTION or texts TEXT...");
  },
};
