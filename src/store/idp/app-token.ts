/**
 * The store's own access token at the IdP (its "app token"), obtained from the app credential
 * (`idp.placement_credential_file`, `CLIENT_ID:CLIENT_SECRET`) with the client credentials
 * grant for the database's resource indicator. It authenticates placement and live questions.
 * Kept until shortly before it expires; callers at the same moment share one exchange. The
 * credential and the token never appear in a message.
 */

import { SkeinError } from "../../common/errors.ts";
import { INVALID_CREDENTIAL_FILE } from "../config/files.ts";
import { storeError } from "../errors.ts";
import { type IdpHttp, jsonBody } from "./http.ts";
import { storeAudience } from "./passes.ts";

/**
 * How long before its expiry the token is exchanged again: a question sent with it must
 * arrive while it is still valid, even after the 15 s whole-request bound.
 */
export const APP_TOKEN_REFRESH_MARGIN_MS = 30_000;

export class AppToken {
  readonly #http: IdpHttp;
  readonly #endpoint: URL;
  readonly #basic: string;
  readonly #resource: string;
  #token: string | undefined;
  #renewAt = 0;
  #pending: Promise<string> | undefined;

  constructor(http: IdpHttp, tokenEndpoint: URL, credential: string, database: string) {
    const colon = credential.indexOf(":");
    if (colon <= 0) {
      throw new SkeinError(
        INVALID_CREDENTIAL_FILE,
        "idp.placement_credential_file: the credential file does not hold CLIENT_ID:CLIENT_SECRET",
      );
    }
    const id = encodeURIComponent(credential.slice(0, colon));
    const secret = encodeURIComponent(credential.slice(colon + 1));
    this.#http = http;
    this.#endpoint = tokenEndpoint;
    this.#basic = `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
    this.#resource = storeAudience(database);
  }

  /** A valid token, exchanged again when near expiry; rejects with a coded refusal. */
  token(): Promise<string> {
    if (this.#token !== undefined && Date.now() < this.#renewAt) {
      return Promise.resolve(this.#token);
    }
    this.#pending ??= this.#exchange().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** Forgets the token (the IdP refused it): the next call exchanges the credential again. */
  forget(): void {
    this.#token = undefined;
  }

  async #exchange(): Promise<string> {
    const answer = await this.#http.request(this.#endpoint, {
      method: "POST",
      headers: {
        authorization: this.#basic,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        resource: this.#resource,
      }).toString(),
    });
    const body = jsonBody(answer) as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (answer.status !== 200 || typeof body?.access_token !== "string") {
      throw storeError(
        "idp_unavailable",
        `the identity provider refused the app credential (HTTP ${answer.status})`,
      );
    }
    const seconds = typeof body.expires_in === "number" ? body.expires_in : 60;
    this.#token = body.access_token;
    this.#renewAt = Date.now() + Math.max(0, seconds * 1000 - APP_TOKEN_REFRESH_MARGIN_MS);
    return body.access_token;
  }
}
