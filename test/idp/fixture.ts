/**
 * Test support for skein-idp: a temp data directory, the real CLI run as a child process,
 * the real `skein-idp serve` on a loopback port (its stderr log captured so tests can check
 * that no secret reaches it), and small HTTP helpers for tokens and AuthZEN calls.
 */

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";

export const IDP_BIN = fileURLToPath(new URL("../../bin/skein-idp.ts", import.meta.url));

export interface CliResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function idpCli(args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [IDP_BIN, ...args],
      { encoding: "utf8" },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

/** A temp directory holding `data/` (the idp data dir) and secret files; removed after. */
export async function idpHome() {
  const root = await mkdtemp(join(tmpdir(), "skein-idp-"));
  after(() => rm(root, { recursive: true, force: true }));
  const dataDir = join(root, "data");
  let files = 0;
  const home = {
    root,
    dataDir,
    /** Runs a management command on this data dir; throws when it fails. */
    async run(...args: string[]): Promise<string> {
      const [first, ...rest] = args;
      const word = rest[0] !== undefined && !rest[0].startsWith("-") ? [rest.shift()!] : [];
      const result = await idpCli([first!, ...word, "--data-dir", dataDir, ...rest]);
      if (result.status !== 0) throw new Error(`skein-idp ${args.join(" ")}: ${result.stderr}`);
      return result.stdout.trim();
    },
    async file(text: string): Promise<string> {
      const path = join(root, `secret-${files++}`);
      await writeFile(path, text, { mode: 0o600 });
      return path;
    },
    async user(name: string, password: string): Promise<void> {
      await home.run("user", "add", name, "--password-file", await home.file(`${password}\n`));
    },
    /** Adds a client and returns its generated secret. */
    async client(id: string, ...options: string[]): Promise<string> {
      return home.run("client", "add", id, ...options);
    },
    async grant(subject: string, action: string, resource: string): Promise<void> {
      await home.run("grant", "--subject", subject, "--action", action, "--resource", resource);
    },
    async revoke(subject: string, action: string, resource: string): Promise<void> {
      await home.run("revoke", "--subject", subject, "--action", action, "--resource", resource);
    },
  };
  return home;
}

export interface IdpProcess {
  readonly issuer: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Everything the process wrote to stderr (its log) so far. */
  readonly log: () => string;
  stop(): Promise<void>;
}

/** Starts `skein-idp serve` and waits for its JSON ready line. */
export function startIdp(dataDir: string, listen = "127.0.0.1:0"): Promise<IdpProcess> {
  const child = spawn(
    process.execPath,
    [IDP_BIN, "serve", "--data-dir", dataDir, "--listen", listen],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SKEIN_LOG_LEVEL: "debug" },
    },
  );
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stopped = false;
  const stop = async () => {
    if (!stopped) {
      stopped = true;
      child.kill("SIGTERM");
    }
    await exited;
  };
  after(stop);
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`skein-idp exited (${code}): ${stderr}`)));
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split("\n")[0];
      if (stdout.includes("\n") && line !== undefined) {
        const { issuer } = JSON.parse(line) as { issuer: string };
        resolve({ issuer, port: Number(new URL(issuer).port), child, log: () => stderr, stop });
      }
    });
  });
}

export function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
}

/** Client credentials for `resource=urn:skein:store:<database>`; returns the token response. */
export async function clientToken(
  issuer: string,
  id: string,
  secret: string,
  database: string,
  extra: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${issuer}/token`, {
    method: "POST",
    headers: {
      authorization: basic(id, secret),
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      resource: `urn:skein:store:${database}`,
      ...extra,
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function accessToken(
  issuer: string,
  id: string,
  secret: string,
  database: string,
): Promise<string> {
  const { status, body } = await clientToken(issuer, id, secret, database);
  if (status !== 200) throw new Error(`token request failed: ${JSON.stringify(body)}`);
  return body.access_token as string;
}

/** POSTs JSON with a bearer token (or none); returns status and parsed body. */
export async function postJson(
  url: string,
  token: string | undefined,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** AuthZEN resources of the store, as the contract spells them. */
export const resources = {
  database: (d: string) => ({ type: "service.database", id: d }),
  collection: (d: string, c: string) => ({
    type: "service.collection",
    id: `${d}/${c}`,
    properties: { database: d, collection: c },
  }),
  branch: (d: string, c: string, b: string) => ({
    type: "service.branch",
    id: `${d}/${c}/${b}`,
    properties: { database: d, collection: c, branch: b },
  }),
  record: (d: string, c: string, b: string, k: string) => ({
    type: "service.record",
    id: `${d}/${c}/${b}/${k}`,
    properties: { database: d, collection: c, branch: b, key: k },
  }),
};
