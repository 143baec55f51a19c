/**
 * The run console's only way to the server: the HTTP API with the bearer the user signed in
 * with (kept in this tab's sessionStorage, never in a cookie or localStorage). Refusals
 * become ApiErrors carrying the server's code. `follow` reads the server-sent event streams
 * with fetch (EventSource cannot send an Authorization header), resumes with `after` when a
 * stream ends, and falls back to the describe long poll or a slow read where the server has
 * no stream.
 */

const KEY = "skein.ui.token";

/** Where calls go: the page's own origin (""); Node tests of this module set the server's. */
let base = "";
export function setBase(origin) {
  base = origin;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

/** What the token says about itself (display only: the server verifies it on every call). */
export function claims() {
  const value = token.get();
  try {
    const part = (value ?? "").split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part));
  } catch {
    return {};
  }
}

/** @type {(error: { code: string, message: string }) => void} */
let onSignedOut = () => {};
export function whenSignedOut(callback) {
  onSignedOut = callback;
}

function headers(body) {
  const h = { authorization: `Bearer ${token.get() ?? ""}` };
  if (body !== undefined) h["content-type"] = "application/json";
  return h;
}

async function refusal(response) {
  const body = await response.json().catch(() => ({}));
  const error = body.error ?? { code: `http_${response.status}`, message: response.statusText };
  if (response.status === 401) onSignedOut(error);
  return new ApiError(response.status, error.code, error.message);
}

export async function api(method, path, body, signal) {
  const response = await fetch(base + path, {
    method,
    headers: headers(body),
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await refusal(response);
  return response.json();
}

export const post = (path, body, signal) => api("POST", path, body, signal);
export const get = (path, signal) => api("GET", path, undefined, signal);

export const qs = (params) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, v);
  return q.toString();
};

/**
 * Reads the page makes by itself (a child's status in a large tree) go through here: at most
 * BACKGROUND_MAX at once, the rest queued, so a run with a thousand children neither floods
 * the server nor takes the browser's few connections from the streams and the user's clicks.
 */
const BACKGROUND_MAX = 4;
let running = 0;
const waiting = [];
export function background(task) {
  return new Promise((resolve, reject) => {
    waiting.push(() => task().then(resolve, reject));
    pump();
  });
}
function pump() {
  while (running < BACKGROUND_MAX && waiting.length > 0) {
    running++;
    waiting
      .shift()()
      .finally(() => {
        running--;
        pump();
      });
  }
}

/** @type {(ms: number, signal: AbortSignal) => Promise<void>} */
const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve(undefined);
    });
  });

/** Parses one SSE block (`event:` and `data:` lines); comments (`: ping`) give null. */
function parseBlock(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return data.length === 0 ? null : { event, data: JSON.parse(data.join("\n")) };
}

/** One connection to a stream; gives "end", "closed" or "missing" (no such route). */
async function readStream(path, body, seen, onItem, onEnd, signal) {
  const response = await fetch(base + path, {
    method: "POST",
    headers: headers(body),
    body: JSON.stringify({ ...body, after: seen.count }),
    signal,
  });
  if (!response.ok) {
    const error = await refusal(response);
    if (error.code === "route_not_found") return "missing";
    throw error;
  }
  if (response.body === null) return "closed";
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return "closed";
    buffer += value.replace(/\r\n?/g, "\n");
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0) {
      const message = parseBlock(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf("\n\n");
      if (message === null) continue;
      if (message.event === "end") {
        onEnd(message.data);
        return "end";
      }
      const { index } = message.data;
      if (index >= seen.count) {
        seen.count = index + 1;
        onItem(message.data, index);
      }
    }
  }
}

/**
 * Follows a stream: `onItem(data)` for each item once, in order, `onEnd(data)` at the end,
 * `onError(error)` on a refusal; `from` items already read are skipped. Reconnects with `after` (the stream ends every 10 minutes,
 * or the network drops), backing off after failures; with no stream route, `fallback(seen,
 * signal)` takes over. Returns the function that stops it.
 */
export function follow(path, body, { onItem, onEnd, onError, fallback, from = 0 }) {
  const controller = new AbortController();
  const { signal } = controller;
  const seen = { count: from };
  (async () => {
    let backoff = 250;
    while (!signal.aborted) {
      let result;
      try {
        result = await readStream(path, body, seen, onItem, onEnd, signal);
        backoff = 250;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.status < 500) return onError?.(error);
        result = "retry";
      }
      if (result === "end") return;
      if (result === "missing") return fallback?.(seen, signal);
      await sleep(result === "closed" ? 100 : backoff, signal);
      backoff = Math.min(backoff * 2, 10_000);
    }
  })();
  return () => controller.abort();
}

/**
 * A history event as the server sends it: its type and the fields of that type.
 * @typedef {{ type: string, [field: string]: any }} HistoryEvent
 */

/** Events per history read: a long history comes in pages, never as one answer. */
export const HISTORY_PAGE = 1000;

/**
 * Reads a run's history from index `after` on, page by page (following `next`), calling
 * `onPage(events)` for each; gives every event read.
 * @param {object} body
 * @param {{ after?: number, signal?: AbortSignal, onPage?: (events: HistoryEvent[]) => void }} [options]
 * @returns {Promise<HistoryEvent[]>}
 */
export async function readHistory(body, { after = 0, signal, onPage } = {}) {
  /** @type {HistoryEvent[]} */
  const all = [];
  let at = after;
  while (at !== null) {
    const page = await post(
      "/workflows/history",
      { ...body, after: at, limit: HISTORY_PAGE },
      signal,
    );
    all.push(...page.events);
    onPage?.(page.events);
    at = page.next;
  }
  return all;
}

export { sleep };
