/**
 * The door's side of the store sockets listed in the door file. Each console call opens a
 * connection with the signed-in user's pass, makes one call and closes, so a pass that
 * expires or a grant that is revoked applies at the next call; every step (connect, hello,
 * the call) is bounded by the door's `timeout_ms`. A store with `idp` names, in its
 * `pass_required` refusal, the audience its passes carry: the door learns each store's
 * database that way (once per store) and asks the identity provider for that pass.
 */

import { SkeinError } from "../../common/errors.ts";
import { StoreClient } from "../client/client.ts";
import { storeError } from "../errors.ts";

const AUDIENCE = /\(audience (urn:skein:store:[A-Za-z0-9_-]+)\)/;

/** What a store's passes must name: a resource, or null for a store without idp. */
export type StoreAudience = string | null;

export class DoorStores {
  readonly #sockets: ReadonlyMap<string, string>;
  readonly #timeoutMs: number;
  readonly #audiences = new Map<string, StoreAudience>();

  constructor(sockets: ReadonlyMap<string, string>, timeoutMs: bigint) {
    this.#sockets = sockets;
    this.#timeoutMs = Number(timeoutMs);
  }

  names(): string[] {
    return [...this.#sockets.keys()];
  }

  has(name: string): boolean {
    return this.#sockets.has(name);
  }

  /** The audience of `name`'s passes, asked of the store once (a hello without a pass). */
  async audience(name: string): Promise<StoreAudience> {
    const known = this.#audiences.get(name);
    if (known !== undefined) return known;
    let audience: StoreAudience;
    try {
      const client = await this.#connect(name, undefined);
      await client.close();
      audience = null;
    } catch (error) {
      const match = error instanceof SkeinError ? AUDIENCE.exec(error.message) : null;
      if (match === null) throw error;
      audience = match[1]!;
    }
    this.#audiences.set(name, audience);
    return audience;
  }

  /** One call on store `name` with `pass`; rejects with the store's coded refusal. */
  async call(name: string, pass: string | undefined, verb: string, args: object): Promise<unknown> {
    const client = await this.#connect(name, pass);
    try {
      return await client.call(verb, args);
    } finally {
      void client.close();
    }
  }

  async #connect(name: string, pass: string | undefined): Promise<StoreClient> {
    const socket = this.#sockets.get(name);
    if (socket === undefined)
      throw new SkeinError("unknown_store", "no such store", { status: 404 });
    const connecting = StoreClient.connect(socket, {
      client: "door",
      timeoutMs: this.#timeoutMs,
      ...(pass === undefined ? {} : { pass }),
    });
    return bounded(connecting, this.#timeoutMs);
  }
}

/**
 * The connect step (socket and hello) within timeout_ms: StoreClient bounds each call, not
 * the socket's connect, so a store that never accepts is cut here. A late connection closes.
 */
function bounded(connecting: Promise<StoreClient>, timeoutMs: number): Promise<StoreClient> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      connecting.then((client) => client.close()).catch(() => {});
      reject(storeError("timeout", `the store did not answer hello within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  return Promise.race([connecting, late]).finally(() => clearTimeout(timer));
}
