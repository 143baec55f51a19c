/**
 * `skein-idp serve --data-dir DIR [--listen HOST:PORT] [--issuer URL] [--pass-ttl SECONDS]`: runs the identity
 * provider until SIGINT or SIGTERM. When it listens it prints one JSON line on stdout,
 * `{"issuer":"http://HOST:PORT"}` (with port 0 the real port), which scripts and tests wait
 * for. Logs go to stderr.
 */

import { type Command, parseOptions, UsageError } from "../../common/cli.ts";
import { createLogger } from "../../common/log.ts";
import { stopSignal } from "../../common/stop-signal.ts";
import { dataDirOf, dataDirOption, reportRefusals } from "./shared.ts";

/** The default listen address: loopback, a fixed port so a team's config can name it. */
export const DEFAULT_LISTEN = "127.0.0.1:9400";

export function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || port > 65535) {
    throw new UsageError(
      `--listen must be HOST:PORT (port 0..65535), found ${JSON.stringify(text)}`,
    );
  }
  return { host: (match[1] ?? match[2])!, port };
}

export function parseIssuer(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError("--issuer must be an http or https origin");
  }
  const origin = url.protocol === "http:" || url.protocol === "https:";
  if (
    !origin ||
    url.pathname !== "/" ||
    url.search !== "" ||
    url.hash !== "" ||
    url.username !== ""
  ) {
    throw new UsageError(
      "--issuer must be an http or https origin (no path, query or credentials)",
    );
  }
  return url.origin;
}

/** `--pass-ttl`: how long an access token lives, in seconds (1 s to 1 day). */
export function parsePassTtl(text: string): number {
  const seconds = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(seconds >= 1 && seconds <= 86_400)) {
    throw new UsageError(`--pass-ttl must be 1..86400 seconds, found ${JSON.stringify(text)}`);
  }
  return seconds;
}

export const serveCommand: Command = {
  name: "serve",
  summary: 'run the identity provider (prints {"issuer":…} when listening)',
  help: "--data-dir DIR [--listen HOST:PORT] [--issuer URL] [--pass-ttl SECONDS]\n\n  --data-dir DIR      state (idp.db) and signing keys (keys.json); created 0700\n  --listen HOST:PORT  where to listen (default 127.0.0.1:9400; port 0 picks a free port)\n  --issuer URL        the public issuer origin, when not http://HOST:PORT\n  --pass-ttl SECONDS  access token lifetime (default 3600; short ones rehearse renewal)\n",
  run: (args, io) =>
    reportRefusals("serve", io, async () => {
      const { values } = parseOptions(
        args,
        {
          ...dataDirOption,
          listen: { type: "string" },
          issuer: { type: "string" },
          "pass-ttl": { type: "string" },
        },
        { max: 0 },
      );
      const dataDir = dataDirOf(values);
      const { host, port } = parseListen(values.listen ?? DEFAULT_LISTEN);
      const issuer = values.issuer === undefined ? undefined : parseIssuer(values.issuer);
      const ttl = values["pass-ttl"];
      const passTtlSeconds = ttl === undefined ? undefined : parsePassTtl(ttl);
      const log = createLogger({ name: "skein-idp" });
      const stop = stopSignal();
      // Loaded here so the management commands do not pay for oidc-provider's import.
      const { startIdp } = await import("../app.ts");
      let running: Awaited<ReturnType<typeof startIdp>>;
      try {
        running = await startIdp({
          dataDir,
          host,
          port,
          log,
          ...(issuer ? { issuer } : {}),
          ...(passTtlSeconds === undefined ? {} : { passTtlSeconds }),
        });
      } catch (error) {
        stop.dispose();
        throw error;
      }
      io.out(JSON.stringify({ issuer: running.issuer }));
      await stop.stopped;
      await running.close();
      log.info("stopped");
      return 0;
    }),
};
