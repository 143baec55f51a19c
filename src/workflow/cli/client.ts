/**
 * The HTTP client the `skein` commands use to talk to a running server: JSON in and out,
 * the bearer on every call, and a refusal body `{"error":{"code","message"}}` turned back
 * into a SkeinError with the same code, so a command prints what the server said.
 */

import { stringify } from "lossless-json";
import { parseJson } from "../../common/decode/index.ts";
import { SkeinError } from "../../common/errors.ts";
import { cliFailure } from "../errors.ts";

export interface ClientOptions {
  readonly server: string;
  readonly token: string;
}

export async function request(
  options: ClientOptions,
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${options.server}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      // Lossless: numbers parsed from user input (`--input`) are sent exactly as written.
      ...(body === undefined ? {} : { body: stringify(body) }),
    });
  } catch (error) {
    const reason = error instanceof Error ? ((error.cause as Error)?.message ?? error.message) : "";
    throw cliFailure("server_unreachable", `cannot reach ${options.server}: ${reason}`);
  }
  const text = await response.text();
  const parsed: unknown = text === "" ? null : parseJson(text);
  if (!response.ok) {
    const error = (parsed as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    const message = typeof error?.message === "string" ? error.message : `HTTP ${response.status}`;
    // The server's own code is passed on as it is; an answer without one is `http_error`.
    if (typeof error?.code !== "string") {
      throw cliFailure("http_error", `http_error: ${message}`, response.status);
    }
    throw new SkeinError(error.code, `${error.code}: ${message}`, { status: response.status });
  }
  return parsed;
}
