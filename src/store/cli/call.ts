/**
 * `skein-store call VERB [JSON]`: sends one verb with its JSON arguments to a running store
 * and prints the result (connection.ts says how the store is found, output.ts how results
 * are printed). A refusal prints `CODE: message` on stderr and exits 1, so scripts can
 * switch on the code.
 */

import { type Command, type Io, parseOptions, UsageError } from "../../common/cli.ts";
import type { StoreClient } from "../client/client.ts";
import { decodeValue } from "../codec/json-value.ts";
import { type ConnectionValues, connectionOptions, withClient } from "./connection.ts";
import { formatJson, outputOption, renderText, textOutput } from "./output.ts";

/** Every client command's options: how to reach the store and how to print. */
const socketOption = { ...connectionOptions, ...outputOption } as const;

export type ClientValues = ConnectionValues & { readonly output?: string | undefined };

/** Prints a result as the options ask; `text` renders it for people (default: generic). */
export function printResult(
  io: Io,
  values: ClientValues,
  result: unknown,
  text: (result: unknown) => string = renderText,
): void {
  io.out(textOutput(values, io) ? text(result) : formatJson(result));
}

/** Connects, calls one verb, prints the answer; the shared body of every client command. */
export function callVerb(
  io: Io,
  values: ClientValues,
  verb: string,
  args: object,
  text?: (result: unknown) => string,
): Promise<number> {
  textOutput(values, io);
  return withClient(io, values, async (client: StoreClient) => {
    printResult(io, values, await client.call(verb, args), text);
    return 0;
  });
}

export function parseJsonArgument(text: string, what: string): unknown {
  try {
    // Integers beyond 2^53 stay exact (bigints), as values read from the store do.
    return decodeValue(text);
  } catch {
    throw new UsageError(`${what} is not valid JSON`);
  }
}

export const callCommand: Command = {
  name: "call",
  summary: "send one verb to a running store and print the result as JSON",
  help: "(--socket PATH | --store NAME) VERB [JSON] [--timeout-ms MS] [--pass-file FILE] [--output text|json]\n\nVERB is a store verb (document.get, changes.list, …); JSON its arguments object.\nThe socket may also come from SKEIN_STORE_SOCKET; with idp, the pass from --pass-file or SKEIN_STORE_PASS.",
  async run(args, io) {
    const { values, positionals } = parseOptions(args, socketOption, { min: 1, max: 2 });
    const body = positionals[1] === undefined ? {} : parseJsonArgument(positionals[1], "JSON");
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new UsageError("JSON must be an object of arguments");
    }
    return callVerb(io, values, positionals[0]!, body);
  },
};

export { socketOption };
