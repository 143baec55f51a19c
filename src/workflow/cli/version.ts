/**
 * `skein version`: this client's version and, when a server answers (`GET /version`, with
 * the usual bearer), the server's. A client and server of different versions is the first
 * thing to rule out when a command meets `route_not_found`. An unreachable or refusing
 * server is reported on the server line and the command still exits 0: the client's own
 * version is always useful.
 */

import { type Command, parseOptions } from "../../common/cli.ts";
import { SkeinError } from "../../common/errors.ts";
import { VERSION } from "../../common/version.ts";
import { request } from "./client.ts";
import { clientOptions, outputMode, serverUrl } from "./options.ts";
import { emit, fields } from "./output.ts";

export const versionCommand: Command = {
  name: "version",
  summary: "print the client's and the server's versions",
  help: "[-s URL] [-t TOKEN] [-o text|json]",
  async run(args, io) {
    const { values } = parseOptions(args, clientOptions, { max: 0 });
    const mode = outputMode(values.output);
    const server = serverUrl(values.server);
    const token = (values.token ?? process.env.SKEIN_TOKEN ?? "").trim();
    let answer: { version: string; node: string } | { error: string };
    try {
      answer = (await request({ server, token }, "GET", "/version")) as {
        version: string;
        node: string;
      };
    } catch (error) {
      if (!(error instanceof SkeinError)) throw error;
      answer = { error: error.message };
    }
    const client = { version: VERSION, node: process.versions.node };
    emit(io, mode, { client, server: { url: server, ...answer } }, () =>
      fields([
        ["client", `${VERSION} (node ${process.versions.node})`],
        [
          "server",
          "error" in answer
            ? `unknown: ${answer.error}`
            : `${answer.version} (node ${answer.node}) at ${server}`,
        ],
      ]),
    );
    return 0;
  },
};
