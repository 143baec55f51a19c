/**
 * Where the store listens. A configured socket is used as given; otherwise the path is
 * `<runtime dir>/<name>.sock`. Either way the parent must be a private directory (owned by
 * this user, mode 0700): `invalid_socket` for a configured path, `invalid_runtime_location`
 * for the runtime directory. The path must fit a Unix socket address (`endpoint_too_long`).
 * A file already at the path is refused unless it is a socket nobody answers on (left by a
 * crash), which is removed when the store starts.
 */

import { lstat, unlink } from "node:fs/promises";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { UNIX_SOCKET_PATH_MAX_BYTES } from "../config/limits.ts";
import {
  ENDPOINT_TOO_LONG,
  INVALID_RUNTIME_LOCATION,
  INVALID_SOCKET,
  startupRefusal,
} from "../errors.ts";
import { inspectPrivateDir } from "./private-dir.ts";
import type { RuntimeDir } from "./runtime-dir.ts";

export interface SocketPlan {
  readonly path: string;
  /** True when the path came from the runtime directory rather than the file. */
  readonly resolved: boolean;
  /** A dead socket file at the path, to remove before listening. */
  readonly stale: boolean;
}

const FIELD = "socket";

/** The socket path for `name`: configured, or in the runtime directory. */
export function socketPathFor(configured: string | null, name: string, runtime: RuntimeDir) {
  return configured ?? join(runtime.path, `${name}.sock`);
}

/** True when something accepts connections on the Unix socket at `path`. */
export function socketAnswers(path: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((done) => {
    const client = connect(path);
    const timer = setTimeout(() => {
      client.destroy();
      done(false);
    }, timeoutMs);
    client.once("connect", () => {
      clearTimeout(timer);
      client.destroy();
      done(true);
    });
    client.once("error", () => {
      clearTimeout(timer);
      done(false);
    });
  });
}

/** Judges the socket path without creating or removing anything. */
export async function planSocket(
  configured: string | null,
  name: string,
  runtime: RuntimeDir,
): Promise<SocketPlan> {
  const path = socketPathFor(configured, name, runtime);
  const resolved = configured === null;
  const bytes = Buffer.byteLength(path, "utf8");
  if (bytes > UNIX_SOCKET_PATH_MAX_BYTES) {
    throw startupRefusal(
      ENDPOINT_TOO_LONG,
      FIELD,
      `${path} is ${bytes} bytes; a Unix socket address holds at most ${UNIX_SOCKET_PATH_MAX_BYTES}`,
    );
  }
  if (!resolved) {
    const parent = dirname(path);
    const state = await inspectPrivateDir(parent, true);
    if (state.kind !== "private") {
      const reason = state.kind === "absent" ? `parent ${parent} does not exist` : state.reason;
      throw startupRefusal(
        INVALID_SOCKET,
        FIELD,
        `${reason} (the parent must be owned by this user with mode 0700)`,
      );
    }
  }
  let stale = false;
  try {
    const info = await lstat(path);
    const code = resolved ? INVALID_RUNTIME_LOCATION : INVALID_SOCKET;
    if (!info.isSocket()) throw startupRefusal(code, FIELD, `${path} exists and is not a socket`);
    if (await socketAnswers(path)) {
      throw startupRefusal(code, FIELD, `${path} is in use by another process`);
    }
    stale = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return { path, resolved, stale };
}

/** Removes the socket file; absent is fine (shutdown after a crash of the listener). */
export async function removeSocket(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
