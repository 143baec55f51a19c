/**
 * The real `skein-idp` for the store's identity tests: a process on a loopback port with its
 * own data dir (stoppable and restartable on the same port, keys kept), its management CLI,
 * passes obtained with the client credentials grant, and a store served on a real socket
 * with the identity client started exactly as `serve` starts it.
 */

import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { SkeinError } from "../../../src/common/errors.ts";
import { StoreClient, type StoreClientOptions } from "../../../src/store/client/client.ts";
import type { EmbedService } from "../../../src/store/embed/service.ts";
import type { Store } from "../../../src/store/engine/index.ts";
import { connectIdp } from "../../../src/store/idp/discovery.ts";
import type { IdpHttpBounds } from "../../../src/store/idp/http.ts";
import { type StoreServerOptions, startStoreServer } from "../../../src/store/transport/server.ts";
import { freshStore } from "../engine/fixture.ts";

const IDP_BIN = fileURLToPath(new URL("../../../bin/skein-idp.ts", import.meta.url));

export interface RunningIdp {
  readonly issuer: string;
  readonly dataDir: string;
  readonly output: () => string;
  stop(): Promise<void>;
  /** Starts it again on the same address, with the same state and keys. */
  start(): Promise<void>;
}

/** `args`: more `serve` options (`--pass-ttl 2`, say). */
export async function runIdp(args: readonly string[] = []): Promise<RunningIdp> {
  const dataDir = join(mkdtempSync(join(tmpdir(), "skein-idp-")), "idp");
  let child: ChildProcess | undefined;
  let listen = "127.0.0.1:0";
  let issuer = "";
  let log = "";
  const start = async () => {
    const proc = spawn(
      process.execPath,
      [IDP_BIN, "serve", "--data-dir", dataDir, "--listen", listen, ...args],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child = proc;
    proc.stderr!.on("data", (d) => {
      log += String(d);
    });
    issuer = await new Promise<string>((resolve, reject) => {
      let out = "";
      proc.stdout!.on("data", (d) => {
        out += String(d);
        log += String(d);
        const line = out.split("\n")[0]!;
        if (out.includes("\n")) resolve((JSON.parse(line) as { issuer: string }).issuer);
      });
      proc.once("exit", (code) => reject(new Error(`skein-idp exited ${code}: ${log}`)));
    });
    listen = new URL(issuer).host;
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (proc === undefined || proc.exitCode !== null) return;
    await new Promise((resolve) => {
      proc.once("exit", resolve);
      proc.kill("SIGTERM");
    });
  };
  await start();
  after(stop);
  return {
    get issuer() {
      return issuer;
    },
    dataDir,
    output: () => log,
    stop,
    start,
  };
}

/** Runs one `skein-idp` management command; its stdout (a generated secret, say). */
export function idpCli(idp: RunningIdp, ...args: string[]): string {
  const sub = ["user", "client", "group", "placement"].includes(args[0]!) ? 2 : 1;
  const argv = [...args.slice(0, sub), "--data-dir", idp.dataDir, ...args.slice(sub)];
  const r = spawnSync(process.execPath, [IDP_BIN, ...argv], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`skein-idp ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Adds a client and returns its secret. */
export function addClient(idp: RunningIdp, id: string, app?: string): string {
  return idpCli(idp, "client", "add", id, ...(app === undefined ? [] : ["--app", app]));
}

export function grant(idp: RunningIdp, subject: string, action: string, resource: string): void {
  idpCli(idp, "grant", "--subject", subject, "--action", action, "--resource", resource);
}

export function revoke(idp: RunningIdp, subject: string, action: string, resource: string): void {
  idpCli(idp, "revoke", "--subject", subject, "--action", action, "--resource", resource);
}

/** A pass for `database` from the client credentials grant. */
export async function clientPass(
  issuer: string,
  id: string,
  secret: string,
  database: string,
): Promise<string> {
  const response = await fetch(new URL("/token", issuer), {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      resource: `urn:skein:store:${database}`,
    }).toString(),
  });
  const body = (await response.json()) as { access_token?: string };
  if (body.access_token === undefined) throw new Error(`no pass: ${JSON.stringify(body)}`);
  return body.access_token;
}

export const DATABASE = "db1";

/**
 * A store whose identity client talks to `idp`; with `placement`, an app client of the
 * database is made and its credential used (as `idp.placement_credential_file` would be).
 */
export async function idpStore(
  idp: RunningIdp,
  options: {
    placement?: boolean;
    bounds?: Partial<IdpHttpBounds>;
    jwksCooldownMs?: number;
    maxPage?: number;
    /** The engine's `changes_scan_records` (default: the engine's). */
    changesScanRecords?: number;
    /** Services beside the store (embedding, search), made once the store exists. */
    services?: (store: Store, dataDir: string) => Promise<Partial<StoreServerOptions>>;
    /** An embedding service to serve beside the store (its walk is started on it). */
    embed?: EmbedService;
  } = {},
) {
  const warnings: string[] = [];
  let credential: string | null = null;
  if (options.placement === true) {
    const id = `app-${Math.random().toString(36).slice(2, 8)}`;
    credential = `${id}:${addClient(idp, id, DATABASE)}`;
  }
  const gate = await connectIdp(
    { issuer: idp.issuer, database: DATABASE, placement_credential_file: null },
    {
      credential,
      warn: (m) => warnings.push(m),
      ...(options.bounds === undefined ? {} : { bounds: options.bounds }),
      ...(options.jwksCooldownMs === undefined ? {} : { jwksCooldownMs: options.jwksCooldownMs }),
    },
  );
  const { store, dir } = await freshStore({
    maxPage: options.maxPage ?? 2_000,
    ...(options.changesScanRecords === undefined
      ? {}
      : { changesScanRecords: options.changesScanRecords }),
  });
  const socketPath = join(dir, "..", "s.sock");
  const server = await startStoreServer(store, {
    socketPath,
    maxFrame: 16 << 20,
    maxClients: 32,
    timeoutMs: 20_000,
    idp: gate,
    embed: options.embed ?? null,
    ...(await options.services?.(store, dir)),
  });
  options.embed?.startWalk(store);
  const clients: StoreClient[] = [];
  after(async () => {
    await options.embed?.close();
    for (const c of clients) await c.close();
    await server.close();
    gate.close();
  });
  return {
    store,
    gate,
    socketPath,
    warnings,
    credential,
    async connect(pass?: string, extra: StoreClientOptions = {}) {
      const client = await StoreClient.connect(socketPath, {
        client: "tester",
        timeoutMs: 60_000,
        ...(pass === undefined ? {} : { pass }),
        ...extra,
      });
      clients.push(client);
      return client;
    },
  };
}

/** A pass for a new client holding `grants` (pairs of action and resource). */
export async function agent(
  idp: RunningIdp,
  id: string,
  grants: readonly [string, string][],
): Promise<{ pass: string; secret: string }> {
  const secret = addClient(idp, id);
  for (const [action, resource] of grants) grant(idp, `client:${id}`, action, resource);
  return { pass: await clientPass(idp.issuer, id, secret, DATABASE), secret };
}

export function writeFile(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/** The store's coded refusal of an act that must be refused. */
export async function refusal(promise: Promise<unknown>): Promise<SkeinError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SkeinError, String(error));
    return error;
  }
  assert.fail("the act was allowed");
}
