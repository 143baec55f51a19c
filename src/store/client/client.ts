/**
 * StoreClient: the TypeScript client of the store socket. `connect` opens the socket and
 * says hello (negotiating max_frame); `call` sends any verb and resolves to its result or
 * rejects with a SkeinError carrying the refusal's code. Many calls may be in flight on
 * one connection; each has its own id and its own timeout_ms. Typed helpers cover the
 * common verbs. A store with `idp` needs the caller's pass (`pass`) at hello.
 */

import { createConnection, type Socket } from "node:net";
import { SkeinError } from "../../common/errors.ts";
import { storeError } from "../errors.ts";
import { decodePayload, encodeFrame, FrameReader } from "../transport/frames.ts";
import type { HelloResult, Response } from "../transport/protocol.ts";

export interface StoreClientOptions {
  /** Largest frame this client accepts (the server may lower it). Default 16 MiB. */
  readonly maxFrame?: number;
  /** Bound on each call, in ms. Default 30000. */
  readonly timeoutMs?: number;
  /** The client's name; the default author of its commits. */
  readonly client?: string;
  /** The caller's pass (an access token from the store's issuer); needed with `idp`. */
  readonly pass?: string;
  /** Asks hello for the verbs the store serves (`hello.verbs`). */
  readonly verbs?: boolean;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class StoreClient {
  readonly #socket: Socket;
  readonly #reader: FrameReader;
  readonly #pending = new Map<number, Pending>();
  readonly #timeoutMs: number;
  #nextId = 1;
  #closedError: SkeinError | undefined;
  hello: HelloResult | undefined;

  private constructor(socket: Socket, options: StoreClientOptions) {
    this.#socket = socket;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#reader = new FrameReader(options.maxFrame ?? 16 << 20);
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("error", (error) => this.#closeAll(storeError("connection_closed", error.message)));
    socket.on("close", () => this.#closeAll(storeError("connection_closed")));
  }

  static async connect(socketPath: string, options: StoreClientOptions = {}): Promise<StoreClient> {
    const socket = createConnection(socketPath);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const client = new StoreClient(socket, options);
    try {
      client.hello = (await client.call("hello", {
        max_frame: options.maxFrame ?? 16 << 20,
        ...(options.client === undefined ? {} : { client: options.client }),
        ...(options.pass === undefined ? {} : { pass: options.pass }),
        ...(options.verbs === true ? { verbs: true } : {}),
      })) as HelloResult;
    } catch (error) {
      socket.destroy();
      throw error;
    }
    return client;
  }

  /** True once the connection has closed (the store stopped, or refused the connection). */
  get closed(): boolean {
    return this.#closedError !== undefined;
  }

  call(verb: string, args: object = {}): Promise<unknown> {
    if (this.#closedError !== undefined) return Promise.reject(this.#closedError);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(storeError("timeout", `${verb}: no answer within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#socket.write(encodeFrame({ id, verb, args }));
    });
  }

  #onData(chunk: Buffer): void {
    for (const event of this.#reader.push(chunk)) {
      if (event.kind === "too_large") {
        this.#closeAll(
          storeError("frame_too_large", `the server sent a frame of ${event.length} bytes`),
        );
        this.#socket.destroy();
        return;
      }
      const response = decodePayload(event.payload) as Response;
      if (response.id === 0 && !response.ok) {
        // A refusal of the connection itself: every call in flight fails with it.
        this.#closeAll(new SkeinError(response.error.code, response.error.message));
        continue;
      }
      const pending = this.#pending.get(response.id);
      if (pending === undefined) continue;
      this.#pending.delete(response.id);
      clearTimeout(pending.timer);
      if (response.ok) pending.resolve(response.result);
      else pending.reject(new SkeinError(response.error.code, response.error.message));
    }
  }

  #closeAll(error: SkeinError): void {
    this.#closedError ??= error;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(this.#closedError);
      this.#pending.delete(id);
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#socket.destroyed) return resolve();
      this.#socket.once("close", () => resolve());
      this.#socket.end();
    });
  }

  // Typed helpers for the common verbs.

  get(
    collection: string,
    key: string,
    options: { branch?: string; version?: number | string } = {},
  ) {
    return this.call("document.get", { collection, key, ...options }) as Promise<{
      found: boolean;
      value?: unknown;
      version: number;
    }>;
  }

  put(
    collection: string,
    records: { key: string; value: unknown }[],
    options: { branch?: string } = {},
  ) {
    return this.call("document.put", { collection, records, ...options }) as Promise<{
      version: number;
      time: string;
      author: string;
    }>;
  }

  /** One page of `query.run`: `code` is a function expression run on each record. */
  query(
    collection: string,
    code: string,
    options: {
      args?: unknown;
      branch?: string;
      version?: number;
      prefix?: string;
      after?: string;
      limit?: number;
    } = {},
  ) {
    return this.call("query.run", { collection, code, ...options }) as Promise<{
      rows: { key: string; output: unknown }[];
      next: string | null;
      scanned: number;
      version: number;
    }>;
  }

  /** Vectors of texts, one per window (questions: one each). See docs/embeddings.md. */
  embedTexts(texts: string[], options: { kind?: "document" | "question" } = {}) {
    return this.call("embed.texts", { texts, ...options }) as Promise<{
      model: string;
      dims: number;
      vectors: number[][][];
    }>;
  }

  /** Binds a field of a collection's values to the store's model. */
  embedEnable(collection: string, field: string) {
    return this.call("embed.enable", { collection, field }) as Promise<EmbedStatus>;
  }

  embedStatus(collection: string) {
    return this.call("embed.status", { collection }) as Promise<EmbedStatus>;
  }

  /** Vectors of records at a data version or ref (default: the latest embedded). */
  embedVectors(
    collection: string,
    keys: string[],
    options: { branch?: string; version?: number | string } = {},
  ) {
    return this.call("embed.vectors", { collection, keys, ...options }) as Promise<{
      version: number;
      vectors: Record<string, number[][] | null>;
    }>;
  }

  /** `search.text`: the k records whose embedded `field` best matches `text`. See docs/search.md. */
  search(collection: string, field: string, text: string, options: SearchOptions = {}) {
    return this.call("search.text", {
      collection,
      field,
      text,
      ...options,
    }) as Promise<SearchAnswer>;
  }
}

export interface SearchOptions {
  branch?: string;
  /** A version number or a ref (branch name, BRANCH@VERSION, tag). */
  version?: number | string;
  k?: number;
  mode?: "vector" | "keyword" | "hybrid";
  prefix?: string;
  exact?: boolean;
  values?: boolean;
}

export interface SearchAnswer {
  readonly rows: { key: string; score: number; window?: number; value?: unknown }[];
  readonly version: number;
  readonly mode: "vector" | "keyword" | "hybrid";
}

export interface EmbedStatus {
  readonly collection: string;
  readonly field: string;
  readonly model: string;
  readonly pending: number;
  readonly records_embedded: number;
  readonly records_refused: number;
  readonly branches: {
    branch: string;
    head: number;
    embedded: number | null;
    walking: number | null;
    records_embedded: number;
  }[];
  readonly error: { code: string; message: string } | null;
}
