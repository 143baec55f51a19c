/**
 * Real processes for the MCP tests: the dev `skein-idp`, a `skein-store serve` with `idp`, and
 * `skein-store mcp-http` processes reading the same service file with their own `mcp_http`
 * objects; passes for agents with chosen grants; the SDK's own Streamable HTTP client.
 */

import { readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { importJWK, SignJWT } from "jose";
import { type Running, start, waitFor } from "../cli/harness.ts";
import { addClient, agent, DATABASE, type RunningIdp, runIdp } from "../idp/support.ts";

export { agent, DATABASE };

const CORE = {
  branch_cache_bytes_per_shard: 1048576,
  max_frame: 1048576,
  max_clients: 16,
  max_page: 100,
  timeout_ms: 5000,
  create: { shards: 2, cache_bytes_total: 8388608, executor_threads: 1 },
};

export interface McpWorld {
  readonly idp: Awaited<ReturnType<typeof runIdp>>;
  readonly store: () => Running;
  /** Stops the store (SIGTERM) and serves the same data again. */
  restartStore(): Promise<void>;
  /** The store's socket, where `serve` placed it (the runtime directory, name `store`). */
  readonly socketPath: string;
  /** Starts an `mcp-http` with `mcp` as its `mcp_http` object; its URL. */
  mcp(mcp: Record<string, unknown>): Promise<{ url: URL; process: Running }>;
}

/**
 * `idpArgs` are more `skein-idp serve` options. With `placement`, the store is given an app credential (`idp.placement_credential_file`),
 * so what it creates is placed and collection- and branch-level grants apply.
 */
export async function mcpWorld(
  options: { placement?: boolean; idpArgs?: readonly string[] } = {},
): Promise<McpWorld> {
  const idp = await runIdp(options.idpArgs);
  const dir = await mkdtemp(join(tmpdir(), "skein-mcp-"));
  const run = join(dir, "run");
  await mkdir(run, { recursive: true });
  await chmod(run, 0o700);
  const env = { XDG_RUNTIME_DIR: run, SKEIN_LOG_LEVEL: "info" };
  let credential: string | null = null;
  if (options.placement === true) {
    credential = join(dir, "app.credential");
    await writeFile(credential, `mcp-app:${addClient(idp, "mcp-app", DATABASE)}\n`, {
      mode: 0o600,
    });
  }
  const service = {
    ...CORE,
    data_dir: join(dir, "store"),
    idp: {
      issuer: idp.issuer,
      database: DATABASE,
      ...(credential === null ? {} : { placement_credential_file: credential }),
    },
  };
  const serviceFile = join(dir, "service.json");
  await writeFile(serviceFile, JSON.stringify(service));
  let store = start(["serve", serviceFile, "--create"], env);
  await waitFor(store, () => /store listening/.test(store.stderr()), "the store");
  let n = 0;
  return {
    idp,
    store: () => store,
    async restartStore() {
      store.child.kill("SIGTERM");
      await store.exited;
      store = start(["serve", serviceFile], env);
      await waitFor(store, () => /store listening/.test(store.stderr()), "the store again");
    },
    socketPath: join(run, "skein-store", "store.sock"),
    async mcp(mcp) {
      const file = join(dir, `mcp-${n++}.json`);
      await writeFile(file, JSON.stringify({ ...service, create: null, mcp_http: mcp }));
      const process = start(["mcp-http", file], env);
      let port = "";
      await waitFor(
        process,
        () => {
          port = /"port":(\d+)[^\n]*mcp-http listening/.exec(process.stderr())?.[1] ?? "";
          return port !== "";
        },
        "mcp-http",
      );
      const path = (mcp.path as string | undefined) ?? "/mcp";
      return { url: new URL(`http://127.0.0.1:${port}${path}`), process };
    },
  };
}

/** A pass signed with the IdP's own key, with chosen claims (a short expiry, say). */
export async function signedPass(idp: RunningIdp, claims: Record<string, unknown>) {
  const keys = JSON.parse(readFileSync(`${idp.dataDir}/keys.json`, "utf8")) as {
    signing: { kid: string }[];
  };
  const jwk = keys.signing[0]!;
  const key = await importJWK(jwk, "ES256");
  return new SignJWT({ skein_subject_type: "client", client_id: "forged", ...claims })
    .setProtectedHeader({ alg: "ES256", kid: jwk.kid, typ: "at+jwt" })
    .sign(key);
}

/** The SDK's own client, connected with `pass` as its bearer. */
export async function sdkClient(url: URL, pass: string): Promise<Client> {
  const client = new Client({ name: "skein-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${pass}` } },
  });
  await client.connect(transport);
  return client;
}

/** A JSON-RPC `tools/list` posted by hand, with the given headers. */
export function post(url: URL, headers: Record<string, string>, body?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: body ?? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
}
