/**
 * Store connections of the MCP server, one per pass. Each request's bearer is the caller's
 * own pass, presented to the store in `hello`: the store verifies it and the identity
 * provider decides each act, so the MCP server never acts with an authority of its own. A
 * connection is shared by the requests of its pass (a store connection carries many calls
 * at once) and kept for the next ones; the pool holds at most `maxConnections`, dropping the
 * least recently used idle one for a new pass. A connection the store closed (a restart, an
 * expired pass) is left behind and the next request of its pass connects again.
 */

import type { SkeinError } from "../../common/errors.ts";
import { StoreClient } from "../client/client.ts";
import { mcpRefusal } from "./refusals.ts";

/**
 * Store connections the MCP server keeps open at most, over all passes. Each is one of the
 * store's `max_clients`; the bound leaves the rest to other clients (it is lowered further
 * to half the store's `max_clients`).
 */
export const MCP_STORE_CONNECTIONS_MAX = 32;

/** Bound on each store call made for a tool, in ms: a stuck store cannot hold a request. */
export const MCP_STORE_CALL_TIMEOUT_MS = 30_000;

/** The name the MCP server gives at hello: the default author of an agent's commits. */
const CLIENT_NAME = "mcp-http";

export interface Lease {
  readonly client: StoreClient;
  release(): void;
}

interface Entry {
  readonly client: Promise<StoreClient>;
  inFlight: number;
}

export interface PassPoolOptions {
  readonly socketPath: string;
  readonly maxConnections: number;
  readonly timeoutMs?: number;
}

export class PassPool {
  readonly #options: PassPoolOptions;
  // Insertion order is recency: a used entry is moved to the end.
  readonly #entries = new Map<string, Entry>();

  constructor(options: PassPoolOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * A connection that said hello with `pass`. Rejects with the store's refusal of the pass
   * (`pass_*`, `max_clients`), `store_unavailable` when the socket does not answer, or
   * `store_connections_busy` when every pooled connection is in use by other passes.
   */
  async acquire(pass: string): Promise<Lease> {
    let entry = this.#entries.get(pass);
    if (entry !== undefined) {
      const client = await entry.client.catch(() => undefined);
      if (client === undefined || client.closed) {
        if (this.#entries.get(pass) === entry) this.#entries.delete(pass);
        // Another request of this pass may have connected again meanwhile.
        entry = this.#entries.get(pass);
      }
    }
    entry ??= this.#connect(pass);
    this.#entries.delete(pass);
    this.#entries.set(pass, entry);
    entry.inFlight += 1;
    let client: StoreClient;
    try {
      client = await entry.client;
    } catch (error) {
      if (this.#entries.get(pass) === entry) this.#entries.delete(pass);
      throw error;
    }
    let released = false;
    const held = entry;
    return {
      client,
      release: () => {
        if (released) return;
        released = true;
        held.inFlight -= 1;
      },
    };
  }

  #connect(pass: string): Entry {
    this.#makeRoom();
    const client = StoreClient.connect(this.#options.socketPath, {
      client: CLIENT_NAME,
      pass,
      verbs: true,
      timeoutMs: this.#options.timeoutMs ?? MCP_STORE_CALL_TIMEOUT_MS,
    }).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ECONNREFUSED") throw mcpRefusal("store_unavailable");
      throw error as SkeinError;
    });
    return { client, inFlight: 0 };
  }

  #makeRoom(): void {
    if (this.#entries.size < this.#options.maxConnections) return;
    for (const [pass, entry] of this.#entries) {
      if (entry.inFlight > 0) continue;
      this.#entries.delete(pass);
      void entry.client.then((c) => c.close()).catch(() => undefined);
      return;
    }
    throw mcpRefusal("store_connections_busy");
  }

  async close(): Promise<void> {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map((e) => e.client.then((c) => c.close()).catch(() => undefined)));
  }
}
