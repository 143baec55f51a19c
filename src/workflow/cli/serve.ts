/**
 * `skein serve [--config FILE] [--listen HOST:PORT] [--grpc-listen HOST:PORT]`: runs one workflow server node until
 * SIGINT or SIGTERM, then shuts down gracefully (no new requests, in-flight ones finish,
 * storage closed) and exits 0. On start it prints where the configuration, data directory,
 * signing key and admin token are (saying which it created), the worker endpoint it serves
 * on and the URL it listens on; the
 * last line is always `listening on URL`, which scripts and tests wait for.
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { decode } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { createLogger } from "../../common/log.ts";
import { type ListenAddress, listenAddress } from "../config/listen.ts";
import { DEFAULT_CONFIG_FILE } from "../config/load.ts";
import type { startServer } from "../server.ts";

export const serveCommand: Command = {
  name: "serve",
  summary: "run a workflow server node",
  help: [
    "[--config FILE] [--listen HOST:PORT] [--grpc-listen HOST:PORT]",
    "",
    `  --config FILE        configuration file (default ./${DEFAULT_CONFIG_FILE}; written on first run)`,
    "  --listen HOST:PORT   listen here instead of http.listen (port 0: any free port)",
    "  --grpc-listen HOST:PORT  serve workers here instead of grpc.listen (port 0: any free port)",
  ].join("\n"),
  async run(args, io) {
    const { values } = parseOptions(
      args,
      { config: { type: "string" }, listen: { type: "string" }, "grpc-listen": { type: "string" } },
      { max: 0 },
    );
    let listen: ListenAddress | undefined;
    if (values.listen !== undefined) {
      const decoded = decode(listenAddress(), values.listen);
      if (!decoded.ok) throw new UsageError(`--listen ${decoded.error.reason}`);
      listen = decoded.value;
    }
    let grpcListen: ListenAddress | undefined;
    if (values["grpc-listen"] !== undefined) {
      const decoded = decode(listenAddress(), values["grpc-listen"]);
      if (!decoded.ok) throw new UsageError(`--grpc-listen ${decoded.error.reason}`);
      grpcListen = decoded.value;
    }
    const logger = createLogger({ name: "skein" });
    // Handlers go in before start-up, so a signal that arrives while the node starts (or
    // just after it prints its URL) still means a graceful stop, never the default kill.
    let signalled: (signal: NodeJS.Signals) => void = () => {};
    const stopRequested = new Promise<NodeJS.Signals>((resolve) => {
      signalled = resolve;
    });
    const onSignal = (signal: NodeJS.Signals) => signalled(signal);
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    try {
      let server: Awaited<ReturnType<typeof startServer>>;
      try {
        // Loaded here, not at the top: every other `skein` command (each a process of its
        // own) then starts without the server's modules (Fastify, PostgreSQL, metrics).
        const { startServer: start } = await import("../server.ts");
        server = await start(values.config ?? DEFAULT_CONFIG_FILE, {
          logger,
          // Storage failed under the engine: exit, so a restart recovers from history.
          onFatal: () => process.exit(70),
          ...(listen === undefined ? {} : { listen }),
          ...(grpcListen === undefined ? {} : { grpcListen }),
        });
      } catch (error) {
        if (!(error instanceof SkeinError)) throw error;
        io.err(`skein: ${error.message}`);
        return 1;
      }
      const r = server.report;
      const made = (created: boolean) => (created ? "created" : "existing");
      io.out(
        [
          r.configWritten
            ? `config: ${r.configFile} (first run: wrote the template)`
            : `config: ${r.configFile}`,
          `data directory: ${r.dataDir}`,
          `storage: ${r.storage.backend} ${r.storage.path} (schema ${r.storage.schema})`,
          `signing key: ${r.signingKey.path} (${made(r.signingKey.created)})`,
          `admin token: ${r.adminToken.path} (${made(r.adminToken.created)})`,
          `default namespace: ${r.defaultNamespace ?? "(not set)"}`,
          `worker endpoint on ${r.workerEndpoint} (runs recovered: ${r.recoveredRuns})`,
          `listening on ${r.url}`,
        ].join("\n"),
      );
      const signal = await stopRequested;
      logger.info({ signal }, "shutting down");
      await server.close();
      io.out("stopped");
      return 0;
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  },
};
