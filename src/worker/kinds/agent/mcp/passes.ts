/**
 * Where an MCP server's bearer comes from. A `bearer_file` is read once when the document is
 * loaded and sent as it is. A `client_credentials` source asks the issuer's token endpoint
 * (from its discovery document) for a pass, keeps it for every attempt of this worker process
 * and asks again before it expires (at `PASS_RENEW_MARGIN` of its lifetime before `exp`, at
 * most a minute), or at once when a server refuses it; concurrent callers share one request.
 * A secret or a pass never appears in an error or a log: a refusal names the issuer and the
 * OAuth error code only.
 */

import { resolve } from "node:path";
import { FileRefused, readBoundedFile } from "../../../../common/files.ts";
import { ActivityError } from "../../../handler.ts";
import type { McpServerSpec } from "./spec.ts";

/** The share of a pass's lifetime left when it is renewed; at most `PASS_RENEW_MAX_MS`. */
export const PASS_RENEW_MARGIN = 0.5;
export const PASS_RENEW_MAX_MS = 60_000;
/** One credential line (the spec's app credential file bound). */
const SECRET_FILE_MAX_BYTES = 4096;
/** Discovery and token requests. */
const TOKEN_TIMEOUT_MS = 15_000;

export interface PassSource {
  /** The bearer to send now (renewed first if it is near its end). */
  get(): Promise<string>;
  /** The server refused `stale` (undefined: the current pass): the next `get` asks anew. */
  refused(stale: string | undefined): void;
}

/** Reads a one-line credential file; its contents are never quoted. */
export async function readCredentialFile(path: string, what: string): Promise<string> {
  let text: string;
  try {
    text = (await readBoundedFile(path, { maxBytes: SECRET_FILE_MAX_BYTES })).toString("utf8");
  } catch (error) {
    if (!(error instanceof FileRefused)) throw error;
    throw new ActivityError("pass_unavailable", `${what} ${path}: ${error.reason}`);
  }
  const line = text.replace(/\r?\n$/, "");
  if (line === "" || /[\r\n]/.test(line)) {
    throw new ActivityError("pass_unavailable", `${what} ${path} must hold exactly one line`);
  }
  return line;
}

/** The pass source of a server's `auth`, its files read now; undefined: no bearer. */
export async function passSource(
  auth: McpServerSpec["auth"],
  baseDir: string,
): Promise<PassSource | undefined> {
  if (auth === undefined) return undefined;
  if (auth.bearer_file !== undefined) {
    const bearer = await readCredentialFile(resolve(baseDir, auth.bearer_file), "bearer_file");
    return { get: async () => bearer, refused: () => {} };
  }
  const cc = auth.client_credentials!;
  const secret = await readCredentialFile(resolve(baseDir, cc.secret_file), "secret_file");
  return new ClientCredentials(cc.issuer, cc.client_id, secret, cc.resource);
}

class ClientCredentials implements PassSource {
  readonly #issuer: string;
  readonly #basic: string;
  readonly #resource: string | undefined;
  #tokenEndpoint: string | undefined;
  #pass: { readonly token: string; readonly renewAt: number } | undefined;
  #asking: Promise<string> | undefined;

  constructor(issuer: string, clientId: string, secret: string, resource: string | undefined) {
    this.#issuer = issuer.replace(/\/$/, "");
    // RFC 6749 §2.3.1: both parts form-encoded before Basic.
    const form = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
    this.#basic = Buffer.from(`${form(clientId)}:${form(secret)}`).toString("base64");
    this.#resource = resource;
  }

  get(): Promise<string> {
    const pass = this.#pass;
    if (pass !== undefined && Date.now() < pass.renewAt) return Promise.resolve(pass.token);
    this.#asking ??= this.#ask().finally(() => {
      this.#asking = undefined;
    });
    return this.#asking;
  }

  refused(stale: string | undefined): void {
    if (stale === undefined || this.#pass?.token === stale) this.#pass = undefined;
  }

  async #ask(): Promise<string> {
    const endpoint = await this.#endpoint();
    const body = new URLSearchParams({ grant_type: "client_credentials" });
    if (this.#resource !== undefined) body.set("resource", this.#resource);
    const asked = Date.now();
    const answer = await this.#request(endpoint, {
      method: "POST",
      headers: {
        authorization: `Basic ${this.#basic}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body,
    });
    const token = answer.access_token;
    const expiresIn = answer.expires_in;
    if (typeof token !== "string" || token === "") {
      throw this.#refusal("the token endpoint's answer has no access_token");
    }
    const lifetime = typeof expiresIn === "number" && expiresIn > 0 ? expiresIn * 1000 : 0;
    const margin = Math.min(PASS_RENEW_MAX_MS, lifetime * PASS_RENEW_MARGIN);
    this.#pass = { token, renewAt: asked + lifetime - margin };
    return token;
  }

  async #endpoint(): Promise<string> {
    if (this.#tokenEndpoint !== undefined) return this.#tokenEndpoint;
    const discovery = await this.#request(`${this.#issuer}/.well-known/openid-configuration`, {});
    if (typeof discovery.token_endpoint !== "string") {
      throw this.#refusal("the discovery document names no token_endpoint");
    }
    this.#tokenEndpoint = discovery.token_endpoint;
    return discovery.token_endpoint;
  }

  async #request(url: string, init: RequestInit): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS) });
    } catch (error) {
      throw this.#refusal(`cannot reach it (${error instanceof Error ? error.name : "error"})`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw this.#refusal(`answered ${response.status} without JSON`);
    }
    const fields =
      typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
    if (!response.ok) {
      // OAuth errors are codes (RFC 6749 §5.2); the description may echo what was sent.
      const code = typeof fields.error === "string" ? `: ${fields.error.slice(0, 64)}` : "";
      throw this.#refusal(`answered ${response.status}${code}`);
    }
    return fields;
  }

  #refusal(why: string): ActivityError {
    return new ActivityError("pass_unavailable", `no pass from ${this.#issuer}: ${why}`);
  }
}
