/**
 * The door's test world, all real processes: `skein-idp serve` (users alice, an admin of the
 * database, and bob, a reader), `skein-store serve` with `idp` on its socket, seeded with a
 * collection whose branch `agent-fix` differs from `main`, and `skein-store door` behind a
 * TLS terminator on loopback (the spec puts a TLS proxy in front of the door; its test
 * certificate is tls-cert.pem). Debian's Chromium is driven with playwright-core: `signIn`
 * goes through the door's sign-in in a page, `raw` sends one HTTPS request past the browser.
 */

import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { connect as netConnect, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { createServer as tlsServer } from "node:tls";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { StoreClient } from "../../../src/store/client/client.ts";
import {
  CHROMIUM_FLAGS as BASE_FLAGS,
  CHROMIUM,
  chromiumPresent,
  launchChromium,
} from "../../support/chromium.ts";
import { type Running, serviceFolder, start, waitFor } from "../cli/harness.ts";
import { agent, DATABASE, grant, idpCli, runIdp } from "../idp/support.ts";

export { CHROMIUM, chromiumPresent } from "../../support/chromium.ts";
/** Debian's Chromium flags, plus: the TLS terminator's certificate is the test's own. */
export const CHROMIUM_FLAGS = [...BASE_FLAGS, "--ignore-certificate-errors"];
export const CONSOLE_FILES = fileURLToPath(new URL("../../../console/door", import.meta.url));
const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));

export const PASSWORDS = { alice: "alice-password-1", bob: "bob-password-12" };

/** A TLS terminator on a free loopback port: TCP to `target()` once it is known. */
async function terminator(target: () => number): Promise<{ port: number; server: Server }> {
  const server = tlsServer(
    { key: readFileSync(here("tls-key.pem")), cert: readFileSync(here("tls-cert.pem")) },
    (secure) => {
      const plain = netConnect(target(), "127.0.0.1");
      secure.pipe(plain).pipe(secure);
      secure.on("error", () => plain.destroy());
      // The door may answer and close at once (a 431); what it wrote still reaches the client.
      plain.on("error", () => secure.end());
    },
  );
  const open = new Set<import("node:net").Socket>();
  server.on("secureConnection", (socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  );
  return { port: (server.address() as { port: number }).port, server };
}

async function waitForSocket(path: string, running: Running): Promise<void> {
  await waitFor(
    running,
    () =>
      new Promise<boolean>((resolve) => {
        const c = netConnect(path);
        c.once("connect", () => {
          c.destroy();
          resolve(true);
        });
        c.once("error", () => resolve(false));
      }),
    "the store's socket",
  );
}

export interface DoorWorld {
  readonly origin: string;
  /** The identity provider's issuer (its sign-in pages are on this origin). */
  readonly issuer: string;
  readonly door: Running;
  /** The door's own loopback port, behind the TLS terminator. */
  readonly port: () => number;
  readonly idpOutput: () => string;
  readonly admin: StoreClient;
  readonly dir: string;
}

/**
 * Chromium and a door world for a test file, made at its top level (their cleanup is
 * registered with after()), or the reason the file's browser tests are skipped.
 */
export async function doorInChromium(): Promise<{
  skip: string | false;
  browser: Browser;
  world: DoorWorld;
}> {
  if (!chromiumPresent()) {
    const none = undefined as unknown;
    return {
      skip: `${CHROMIUM} is not installed`,
      browser: none as Browser,
      world: none as DoorWorld,
    };
  }
  const browser = await launchChromium(["--ignore-certificate-errors"]);
  return { skip: false, browser, world: await doorWorld() };
}

export async function doorWorld(env: Record<string, string> = {}): Promise<DoorWorld> {
  const idp = await runIdp();
  const dir = await mkdtemp(join(tmpdir(), "skein-door-world-"));
  // The store.
  const { run, file: serviceFile } = await serviceFolder(dir, {
    idp: { issuer: idp.issuer, database: DATABASE },
    // The query group: the console's Query view runs the shipped sandbox worker.
    query_worker: fileURLToPath(new URL("../../../bin/skein-query-worker", import.meta.url)),
    query_time_ms: 5000,
    query_memory_bytes: 33554432,
    query_outputs_per_record: 3,
    query_scan_records: 1000,
    query_max_running: 2,
  });
  const store = start(["serve", serviceFile, "--create"], { XDG_RUNTIME_DIR: run });
  after(async () => {
    store.child.kill("SIGTERM");
    await store.exited;
  });
  const socket = join(run, "skein-store", "store.sock");
  await waitForSocket(socket, store);
  // People and the door's client.
  let doorPort = 0;
  const tls = await terminator(() => doorPort);
  const origin = `https://127.0.0.1:${tls.port}`;
  for (const [name, password] of Object.entries(PASSWORDS)) {
    const file = join(dir, `${name}.pw`);
    await writeFile(file, `${password}\n`, { mode: 0o600 });
    idpCli(idp, "user", "add", name, "--password-file", file);
  }
  grant(idp, "user:alice", "admin", `db/${DATABASE}`);
  grant(idp, "user:bob", "read", `db/${DATABASE}`);
  const secret = idpCli(idp, "client", "add", "console", "--redirect", `${origin}/callback`);
  const secretFile = join(dir, "door.secret");
  await writeFile(secretFile, `${secret}\n`, { mode: 0o600 });
  // Seed: notes on main, and an agent's branch that changes, adds and removes documents.
  const seeder = await agent(idp, "seeder", [["admin", `db/${DATABASE}`]]);
  const admin = await StoreClient.connect(socket, { pass: seeder.pass, client: "seeder" });
  after(() => admin.close());
  await seed(admin);
  // The door.
  const doorFile = join(dir, "door.json");
  await writeFile(
    doorFile,
    JSON.stringify({
      listen: "127.0.0.1:0",
      origin,
      files: CONSOLE_FILES,
      stores: { shop: socket },
      timeout_ms: 5000,
      idp: {
        issuer: idp.issuer,
        client_id: "console",
        secret_file: secretFile,
        redirect: `${origin}/callback`,
      },
    }),
  );
  const door = start(["door", doorFile], { SKEIN_LOG_LEVEL: "info", ...env });
  after(async () => {
    door.child.kill("SIGTERM");
    await door.exited;
  });
  await waitFor(
    door,
    () => {
      const m = /"port":(\d+)/.exec(door.stderr());
      if (m) doorPort = Number(m[1]);
      return doorPort > 0;
    },
    "the door's listener",
  );
  return {
    origin,
    issuer: idp.issuer,
    door,
    port: () => doorPort,
    idpOutput: idp.output,
    admin,
    dir,
  };
}

async function seed(admin: StoreClient): Promise<void> {
  await admin.call("collections.create", { collection: "notes" });
  await admin.put("notes", [
    { key: "plan/intro", value: { title: "Intro", status: "draft", tags: ["a"] } },
    { key: "plan/outro", value: { title: "Outro", words: 120 } },
    { key: "readme", value: "hello" },
  ]);
  await admin.call("branches.create", { collection: "notes", branch: "agent-fix" });
  await admin.put(
    "notes",
    [
      { key: "plan/intro", value: { title: "Intro", status: "ready", tags: ["a", "b"] } },
      { key: "plan/middle", value: { title: "Middle", words: 300 } },
    ],
    { branch: "agent-fix" },
  );
  await admin.call("document.delete", { collection: "notes", branch: "agent-fix", key: "readme" });
}

export async function signIn(
  page: Page,
  world: DoorWorld,
  name: keyof typeof PASSWORDS,
  path = "/",
) {
  await page.goto(`${world.origin}${path}`);
  await page.getByRole("link", { name: "Sign in" }).click();
  await page.locator('input[name="name"], input[name="login"]').first().fill(name);
  await page.locator('input[type="password"]').fill(PASSWORDS[name]);
  await page.locator('button[type="submit"], input[type="submit"]').first().click();
  await page.waitForURL(`${world.origin}${path}`).catch(async (error: unknown) => {
    throw new Error(`sign-in ended at ${page.url()}: ${(await page.content()).slice(0, 600)}`, {
      cause: error,
    });
  });
  await page.locator("header.top .who", { hasText: name }).waitFor();
}

/** A raw HTTPS request through the TLS terminator (self-signed: not verified). */
export function raw(
  origin: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${origin}${path}`,
      { method: options.method ?? "GET", headers: options.headers, rejectUnauthorized: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (d: string) => {
          body += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}
