/**
 * The closed loops' HTTP client: JSON requests over `node:http` with a keep-alive agent,
 * one socket per lane. The benches that compare servers side by side (Skein's closed loop
 * and Restate's, bench/support/restate-closed-loop.ts) run their loops through it, so the
 * client costs both alike and as little as Node allows. With `fetch` (undici) the client
 * process used about as much CPU per step as the server it measured, and on a 2-core
 * machine that CPU is taken from the servers.
 */

import { Agent, request } from "node:http";

export interface JsonAnswer {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a bench reads the fields it asked for
  readonly body: any;
}

export class JsonClient {
  readonly #agent: Agent;
  readonly #host: string;
  readonly #port: number;
  readonly #headers: Record<string, string>;

  /** `base` is `http://host:port`; `headers` go with every request (a bearer, say). */
  constructor(base: string, sockets: number, headers: Record<string, string> = {}) {
    const url = new URL(base);
    this.#host = url.hostname;
    this.#port = Number(url.port);
    this.#agent = new Agent({ keepAlive: true, maxSockets: sockets });
    this.#headers = { "content-type": "application/json", ...headers };
  }

  /** POSTs `body` as JSON; the answer's body parsed (undefined when empty). */
  post(path: string, body: unknown): Promise<JsonAnswer> {
    const text = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.#host,
          port: this.#port,
          path,
          method: "POST",
          agent: this.#agent,
          headers: { ...this.#headers, "content-length": Buffer.byteLength(text) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => {
            const answer = Buffer.concat(chunks).toString("utf8");
            try {
              resolve({
                status: res.statusCode ?? 0,
                body: answer === "" ? undefined : JSON.parse(answer),
              });
            } catch (error) {
              reject(error);
            }
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(text);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
