/**
 * The store's HTTP client to its identity provider: the one road every question, placement
 * and key fetch takes. It holds the spec's bounds for the live permission client (5 s to
 * connect, 15 s for a whole request, waiting for a connection included), keeps connections
 * alive between questions (a decided act costs one round trip, not a handshake), caps the
 * connections it opens and the requests waiting for one, and caps the answer's size. A
 * failure is an `IdpHttpError` with a `kind`; callers decide what it means (a refused act
 * at run time, `endpoint_refused` at start-up). Messages name the URL's path only: never a
 * header (a pass, the app token) nor a body.
 */

import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Socket } from "node:net";

/** Spec, Limits: "Store live permission client: 5 seconds connect". */
export const IDP_CONNECT_TIMEOUT_MS = 5_000;
/** Spec, Limits: "15 seconds whole request", from the call until the last answer byte. */
export const IDP_REQUEST_TIMEOUT_MS = 15_000;
/**
 * Connections open to the IdP at once. Questions beyond it wait for a free connection (within
 * the whole-request bound): a burst of acts cannot open a socket each against the IdP.
 */
export const IDP_MAX_SOCKETS = 16;
/**
 * Requests waiting for a connection at once. Beyond it a request fails at once (`busy`)
 * rather than holding memory and a 15 s timer each while the IdP is slow.
 */
export const IDP_MAX_WAITING = 1_024;
/**
 * Largest answer read from the IdP. A batch of 1,000 decisions is about 20 KiB; discovery
 * and key sets are smaller. More is not an answer the store needs, so it is refused.
 */
export const IDP_MAX_RESPONSE_BYTES = 1 << 20;

export type IdpHttpFailure =
  | "connect_timeout"
  | "timeout"
  | "unreachable"
  | "too_large"
  | "busy"
  | "closed"
  | "status";

export class IdpHttpError extends Error {
  readonly kind: IdpHttpFailure;
  constructor(kind: IdpHttpFailure, message: string) {
    super(message);
    this.name = "IdpHttpError";
    this.kind = kind;
  }
}

export interface IdpHttpAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
}

export interface IdpHttpRequest {
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface IdpHttpBounds {
  readonly connectMs: number;
  readonly requestMs: number;
  readonly maxSockets: number;
  readonly maxWaiting: number;
  readonly maxResponseBytes: number;
}

export const IDP_HTTP_BOUNDS: IdpHttpBounds = {
  connectMs: IDP_CONNECT_TIMEOUT_MS,
  requestMs: IDP_REQUEST_TIMEOUT_MS,
  maxSockets: IDP_MAX_SOCKETS,
  maxWaiting: IDP_MAX_WAITING,
  maxResponseBytes: IDP_MAX_RESPONSE_BYTES,
};

export class IdpHttp {
  readonly #bounds: IdpHttpBounds;
  readonly #http: HttpAgent;
  readonly #https: HttpsAgent;
  #inFlight = 0;
  #sent = 0;

  constructor(bounds: Partial<IdpHttpBounds> = {}) {
    this.#bounds = { ...IDP_HTTP_BOUNDS, ...bounds };
    const options = { keepAlive: true, maxSockets: this.#bounds.maxSockets, scheduling: "lifo" };
    this.#http = new HttpAgent(options as ConstructorParameters<typeof HttpAgent>[0]);
    this.#https = new HttpsAgent(options as ConstructorParameters<typeof HttpsAgent>[0]);
  }

  /** Sends one request; resolves with any HTTP answer, rejects with an `IdpHttpError`. */
  request(url: URL, init: IdpHttpRequest): Promise<IdpHttpAnswer> {
    const { maxSockets, maxWaiting } = this.#bounds;
    if (this.#inFlight >= maxSockets + maxWaiting) {
      return Promise.reject(
        new IdpHttpError("busy", `${init.method} ${url.pathname}: too many requests waiting`),
      );
    }
    this.#inFlight++;
    this.#sent++;
    return this.#send(url, init).finally(() => {
      this.#inFlight--;
    });
  }

  #send(url: URL, init: IdpHttpRequest): Promise<IdpHttpAnswer> {
    const { connectMs, requestMs, maxResponseBytes } = this.#bounds;
    const what = `${init.method} ${url.pathname}`;
    const secure = url.protocol === "https:";
    return new Promise((resolve, reject) => {
      let connectTimer: NodeJS.Timeout | undefined;
      const fail = (error: IdpHttpError) => {
        clearTimeout(whole);
        clearTimeout(connectTimer);
        req.destroy();
        reject(error);
      };
      const whole = setTimeout(
        () => fail(new IdpHttpError("timeout", `${what}: no whole answer within ${requestMs} ms`)),
        requestMs,
      );
      // The body stays a string: Node then sends the head and the body in one write, where
      // a Buffer body is a second chunk and a writev. On loopback each write wakes the IdP,
      // and the writev cost about 20 µs more per question (measured, bench:idp profile).
      const body = init.body;
      const req = (secure ? httpsRequest : httpRequest)({
        ...target(url),
        method: init.method,
        agent: secure ? this.#https : this.#http,
        headers: {
          ...init.headers,
          ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }),
        },
      });
      req.on("socket", (socket: Socket) => {
        // A reused keep-alive socket is connected already; a new one gets the connect bound.
        if (!socket.connecting) return;
        connectTimer = setTimeout(
          () =>
            fail(
              new IdpHttpError("connect_timeout", `${what}: no connection within ${connectMs} ms`),
            ),
          connectMs,
        );
        socket.once("connect", () => clearTimeout(connectTimer));
      });
      req.on("error", (error: NodeJS.ErrnoException) => {
        fail(new IdpHttpError("unreachable", `${what}: ${error.code ?? "connection failed"}`));
      });
      req.on("response", (res: IncomingMessage) => {
        const declared = Number(res.headers["content-length"] ?? 0);
        if (declared > maxResponseBytes) {
          fail(tooLarge(what, maxResponseBytes));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) fail(tooLarge(what, maxResponseBytes));
          else chunks.push(chunk);
        });
        res.on("error", () => fail(new IdpHttpError("closed", `${what}: the answer broke off`)));
        res.on("aborted", () => fail(new IdpHttpError("closed", `${what}: the answer broke off`)));
        res.on("end", () => {
          clearTimeout(whole);
          clearTimeout(connectTimer);
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers["content-type"] ?? ""),
            body: Buffer.concat(chunks),
          });
        });
      });
      req.end(body);
    });
  }

  /** Requests sent so far (what a benchmark or test counts round trips by). */
  get sent(): number {
    return this.#sent;
  }

  /** Closes idle connections; requests in flight end by their bounds. */
  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}

/** Where a URL points, as request options: Node would otherwise parse it on every request. */
interface Target {
  readonly protocol: string;
  readonly hostname: string;
  readonly port: string;
  readonly path: string;
  readonly auth?: string;
}

/** Bounded: the store asks a handful of endpoints; discovery may name a few more. */
const TARGETS_MAX = 64;
const targets = new Map<string, Target>();

function target(url: URL): Target {
  const href = url.href;
  let found = targets.get(href);
  if (found === undefined) {
    // IPv6 literals come bracketed in a URL; request options want the bare address.
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    const userinfo = url.username !== "" || url.password !== "";
    found = {
      protocol: url.protocol,
      hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      // As Node reads a URL: user information becomes basic authentication.
      ...(userinfo
        ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` }
        : {}),
    };
    if (targets.size >= TARGETS_MAX) targets.clear();
    targets.set(href, found);
  }
  return found;
}

function tooLarge(what: string, max: number): IdpHttpError {
  return new IdpHttpError("too_large", `${what}: the answer is larger than ${max} bytes`);
}

/** The answer's body as JSON, or undefined when it is not JSON. */
export function jsonBody(answer: IdpHttpAnswer): unknown {
  try {
    return JSON.parse(answer.body.toString("utf8"));
  } catch {
    return undefined;
  }
}
