/**
 * The `http` kind: an action is an HTTP request template. `{name}` placeholders in the URL
 * are filled, URI-encoded, from the input's top-level fields; the input JSON is the request
 * body (except for GET and DELETE); a 2xx response's JSON body is the output (an empty body
 * is `null`). Other statuses fail with the body's tail; 4xx other than 408 and 429 are not
 * retried, since sending the same request again cannot help. A cancel aborts the request.
 */

import {
  type Decoded,
  object,
  oneOf,
  refine,
  string,
  stringMap,
  withDefault,
} from "../../common/decode/index.ts";
import { ActivityError, abortError, checkJsonText, type Handler, tail } from "../handler.ts";

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const urlTemplate = refine(string({ minBytes: 1 }), (template) => {
  try {
    const url = new URL(template.replace(PLACEHOLDER, "x"));
    return url.protocol === "http:" || url.protocol === "https:"
      ? undefined
      : "must be an http or https URL";
  } catch {
    return "must be an http or https URL (with {field} placeholders)";
  }
});

export const httpAction = object({
  url: urlTemplate,
  method: withDefault(oneOf(["GET", "POST", "PUT", "PATCH", "DELETE"]), "POST"),
  headers: withDefault(stringMap(string()), new Map<string, string>()),
});

export type HttpAction = Decoded<typeof httpAction>;

export function httpHandler(action: HttpAction): Handler {
  const sendsBody = action.method !== "GET" && action.method !== "DELETE";
  const headers = Object.fromEntries(action.headers);
  if (sendsBody) headers["content-type"] ??= "application/json";
  headers.accept ??= "application/json";
  return async (inputJson, ctx) => {
    const url = fillUrl(action.url, JSON.parse(inputJson));
    let response: Response;
    let body: string;
    try {
      response = await fetch(url, {
        method: action.method,
        headers,
        signal: ctx.signal,
        ...(sendsBody ? { body: inputJson } : {}),
      });
      body = await response.text();
    } catch (error) {
      if (ctx.signal.aborted) throw abortError(ctx.signal);
      const reason =
        error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error);
      throw new ActivityError("http_error", `${action.method} ${url}: ${reason}`);
    }
    if (response.status < 200 || response.status > 299) {
      const retryable =
        response.status >= 500 || response.status === 408 || response.status === 429;
      throw new ActivityError(
        "http_status",
        `${action.method} ${url} answered ${response.status}: ${tail(body)}`,
        {
          nonRetryable: !retryable,
        },
      );
    }
    return body.trim() === "" ? "null" : checkJsonText(body, "response body");
  };
}

function fillUrl(template: string, input: unknown): string {
  return template.replace(PLACEHOLDER, (_, field: string) => {
    const value =
      typeof input === "object" && input !== null && !Array.isArray(input)
        ? (input as Record<string, unknown>)[field]
        : undefined;
    if (value === undefined || value === null || typeof value === "object") {
      throw new ActivityError(
        "bad_input",
        `url placeholder {${field}} needs a scalar input field ${field}`,
        {
          nonRetryable: true,
        },
      );
    }
    return encodeURIComponent(String(value));
  });
}
