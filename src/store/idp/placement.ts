/**
 * Placement: registers each collection and branch the store creates under its database at
 * the IdP (what lets grants on the database's collections and branches apply to it), and
 * removes the registration when the store deletes it. Authenticated with the app token only.
 * A failed placement is `placement_failed`; a failed removal is reported to the caller, who
 * logs it (the store's own deletion has happened by then and is not undone).
 */

import { storeError } from "../errors.ts";
import type { AppToken } from "./app-token.ts";
import { type IdpHttp, type IdpHttpAnswer, IdpHttpError, jsonBody } from "./http.ts";

export class Placement {
  readonly #http: IdpHttp;
  readonly #base: URL;
  readonly #app: AppToken;

  constructor(http: IdpHttp, issuer: string, database: string, app: AppToken) {
    this.#http = http;
    this.#base = new URL(`/placement/v1/databases/${encodeURIComponent(database)}/`, issuer);
    this.#app = app;
  }

  /** Places a collection (or one of its branches); resolves whether the IdP created it now. */
  async place(collection: string, branch?: string): Promise<boolean> {
    let answer: IdpHttpAnswer;
    try {
      answer = await this.#send("PUT", collection, branch);
    } catch (error) {
      throw storeError("placement_failed", `${(error as Error).message}; nothing was created`);
    }
    const body = jsonBody(answer) as { placed?: unknown; created?: unknown } | undefined;
    if (answer.status !== 200 || body?.placed !== true) {
      throw storeError("placement_failed", `${failure(answer)}; nothing was created`);
    }
    return body.created === true;
  }

  /** Removes a placement; rejects with `placement_failed` when the IdP does not confirm it. */
  async remove(collection: string, branch?: string): Promise<void> {
    const answer = await this.#send("DELETE", collection, branch);
    if (answer.status !== 200) throw storeError("placement_failed", failure(answer));
  }

  async #send(
    method: "PUT" | "DELETE",
    collection: string,
    branch: string | undefined,
  ): Promise<IdpHttpAnswer> {
    const path =
      `collections/${encodeURIComponent(collection)}` +
      (branch === undefined ? "" : `/branches/${encodeURIComponent(branch)}`);
    try {
      const token = await this.#app.token();
      let answer = await this.#request(method, path, token);
      if (answer.status === 401) {
        this.#app.forget();
        answer = await this.#request(method, path, await this.#app.token());
      }
      return answer;
    } catch (error) {
      if (error instanceof IdpHttpError) {
        throw storeError(
          "placement_failed",
          `the identity provider did not answer (${error.kind})`,
        );
      }
      // The app token could not be had: the placement could not be asked for.
      throw storeError("placement_failed", (error as Error).message);
    }
  }

  #request(method: "PUT" | "DELETE", path: string, token: string) {
    return this.#http.request(new URL(path, this.#base), {
      method,
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    });
  }
}

function failure(answer: IdpHttpAnswer): string {
  const code = (jsonBody(answer) as { error?: { code?: unknown } } | undefined)?.error?.code;
  const named = typeof code === "string" && /^[a-z_]{1,64}$/.test(code) ? ` ${code}` : "";
  return `the identity provider refused the placement (HTTP ${answer.status}${named})`;
}
