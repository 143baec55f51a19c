/**
 * `skein-store query --socket PATH COLLECTION --code FILE|- [--args JSON] [--prefix P]
 * [--after K] [--limit N] [--branch B] [--version V]`: runs one page of `query.run` and
 * prints it as JSON. The code is read from FILE, or from stdin with `-`; it is bounded by
 * QUERY_CODE_BYTES, the store's own bound on it.
 */

import { readFile } from "node:fs/promises";
import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { QUERY_CODE_BYTES } from "../query/limits.ts";
import { refArg } from "./args.ts";
import { callVerb, parseJsonArgument, socketOption } from "./call.ts";

async function readCode(source: string): Promise<string> {
  let code: string;
  if (source === "-") {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      size += (chunk as Buffer).length;
      if (size > QUERY_CODE_BYTES) break;
      chunks.push(chunk as Buffer);
    }
    code = Buffer.concat(chunks).toString("utf8");
  } else {
    try {
      code = await readFile(source, "utf8");
    } catch (error) {
      throw new UsageError(`--code ${source}: ${(error as NodeJS.ErrnoException).code}`);
    }
  }
  if (Buffer.byteLength(code) > QUERY_CODE_BYTES) {
    throw new UsageError(`--code is longer than ${QUERY_CODE_BYTES} bytes`);
  }
  return code;
}

function whole(text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`--${what} must be a whole number`);
  return n;
}

export const queryCommand: Command = {
  name: "query",
  summary: "run a JavaScript query over a collection's records (query.run)",
  help: "(--socket PATH | --store NAME) COLLECTION --code FILE|- [--args JSON] [--prefix P] [--after K] [--limit N] [--branch B] [--version V]\n\nFILE holds a function expression (record, args) => output | output[] | undefined; - reads it from stdin.",
  async run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      {
        ...socketOption,
        code: { type: "string" },
        args: { type: "string" },
        prefix: { type: "string" },
        after: { type: "string" },
        limit: { type: "string" },
        branch: { type: "string" },
        version: { type: "string" },
      },
      { min: 1, max: 1 },
    );
    if (values.code === undefined) throw new UsageError("--code FILE|- is required");
    const request: Record<string, unknown> = {
      collection: positionals[0],
      code: await readCode(values.code),
      args: values.args === undefined ? undefined : parseJsonArgument(values.args, "--args"),
      prefix: values.prefix,
      after: values.after,
      limit: whole(values.limit, "limit"),
      branch: values.branch,
      version: refArg(values.version),
    };
    for (const key of Object.keys(request)) if (request[key] === undefined) delete request[key];
    return callVerb(io, values, "query.run", request);
  },
};
