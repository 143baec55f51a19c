/**
 * `skein-store search --socket PATH COLLECTION FIELD TEXT [--k N] [--mode M] [--branch B]
 * [--version V] [--prefix P] [--exact] [--no-values]`: one `search.text` call, printed as
 * JSON. See docs/search.md.
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { defined, refArg, whole } from "./args.ts";
import { callVerb, socketOption } from "./call.ts";

const MODES = ["vector", "keyword", "hybrid"];

export const searchCommand: Command = {
  name: "search",
  summary: "search a collection's embedded field by meaning, words or both (search.text)",
  help: "(--socket PATH | --store NAME) COLLECTION FIELD TEXT [--k N] [--mode vector|keyword|hybrid] [--branch B] [--version V] [--prefix P] [--exact] [--no-values]",
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      {
        ...socketOption,
        k: { type: "string" },
        mode: { type: "string" },
        branch: { type: "string" },
        version: { type: "string" },
        prefix: { type: "string" },
        exact: { type: "boolean" },
        "no-values": { type: "boolean" },
      },
      { min: 3, max: 3 },
    );
    if (values.mode !== undefined && !MODES.includes(values.mode)) {
      throw new UsageError("--mode must be vector, keyword or hybrid");
    }
    return callVerb(
      io,
      values,
      "search.text",
      defined({
        collection: positionals[0],
        field: positionals[1],
        text: positionals[2],
        k: whole(values.k, "k"),
        mode: values.mode,
        branch: values.branch,
        version: refArg(values.version),
        prefix: values.prefix,
        exact: values.exact === true ? true : undefined,
        values: values["no-values"] === true ? false : undefined,
      }),
    );
  },
};
