/**
 * The authorization code flow through skein-idp's login page, driven with fetch: authorize,
 * the form, the redirects (a small cookie jar carries the interaction's cookies).
 * `submitFrom` posts the form from a chosen loopback address: another network source.
 */

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";

export const REDIRECT = "http://127.0.0.1:9/callback";

/** A minimal cookie jar: name → value, sent on every request (paths are not needed here). */
export class Jar {
  readonly #cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";", 1);
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

export interface Flow {
  readonly jar: Jar;
  readonly verifier: string;
  /** The login page's URL (the form posts to `${url}/login`). */
  readonly interaction: string;
  /** The login page's Content-Security-Policy. */
  readonly csp: string;
  readonly page: string;
}

async function follow(issuer: string, start: string, jar: Jar): Promise<Response> {
  let url = start;
  for (let hops = 0; hops < 10; hops++) {
    const response = await fetch(url, { redirect: "manual", headers: { cookie: jar.header() } });
    jar.take(response);
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || location === null) return response;
    if (location.startsWith(REDIRECT)) return response;
    url = new URL(location, issuer).href;
  }
  throw new Error("too many redirects");
}

export async function beginLogin(issuer: string, clientId: string): Promise<Flow> {
  const jar = new Jar();
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const authorize = new URL(`${issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: clientId,
    response_type: "code",
    redirect_uri: REDIRECT,
    scope: "openid store",
    resource: "urn:skein:store:shop",
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s-123",
  }).toString();
  const page = await follow(issuer, authorize.href, jar);
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-type") ?? "", /text\/html/);
  const csp = page.headers.get("content-security-policy") ?? "";
  return { jar, verifier, interaction: page.url, csp, page: await page.text() };
}

export async function submit(issuer: string, flow: Flow, name: string, password: string) {
  const response = await fetch(`${flow.interaction}/login`, {
    method: "POST",
    redirect: "manual",
    headers: {
      cookie: flow.jar.header(),
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ name, password }),
  });
  flow.jar.take(response);
  if (response.status !== 303 && response.status !== 302) return response;
  return follow(issuer, new URL(response.headers.get("location")!, issuer).href, flow.jar);
}

/** Posts the login form from `localAddress` (a loopback address such as 127.0.0.2). */
export function submitFrom(
  flow: Flow,
  name: string,
  password: string,
  localAddress: string,
): Promise<{ status: number; text: string }> {
  const body = new URLSearchParams({ name, password }).toString();
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${flow.interaction}/login`,
      {
        method: "POST",
        localAddress,
        headers: {
          cookie: flow.jar.header(),
          "content-type": "application/x-www-form-urlencoded",
          "content-length": Buffer.byteLength(body),
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8").on("data", (d: string) => {
          text += d;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}
