import assert from "node:assert/strict";
import { access, chmod, mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { decodeOrThrow } from "../../src/common/decode/index.ts";
import { silentLogger } from "../../src/common/log.ts";
import { serviceFile } from "../../src/store/config/service-file.ts";
import { startStoreServer } from "../../src/store/server.ts";
import type { StoreStartup } from "../../src/store/startup/plan.ts";

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "skein-server-"));
  await chmod(dir, 0o700);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function startup(name: string, maxClients: number): StoreStartup {
  const config = decodeOrThrow(serviceFile, {
    data_dir: join(dir, name),
    branch_cache_bytes_per_shard: 1,
    max_frame: 65536,
    max_clients: maxClients,
    max_page: 10,
    timeout_ms: 1000,
  });
  return {
    config,
    dataDir: join(dir, name),
    name,
    socketPath: join(dir, `${name}.sock`),
    created: false,
    placementCredential: null,
  };
}

/** Connects and resolves with the socket, and a promise of its closing. */
function open(path: string): Promise<{ socket: Socket; closed: Promise<void> }> {
  return new Promise((done, fail) => {
    const socket = connect(path);
    const closed = new Promise<void>((c) => socket.once("close", () => c()));
    socket.once("connect", () => done({ socket, closed }));
    socket.once("error", fail);
  });
}

describe("store listener", () => {
  test("socket mode 0600; close ends connections and removes the socket", async () => {
    const s = startup("one", 4);
    await mkdir(s.dataDir);
    const server = await startStoreServer(s, silentLogger());
    assert.equal((await stat(s.socketPath)).mode & 0o777, 0o600);
    const a = await open(s.socketPath);
    const b = await open(s.socketPath);
    await server.close();
    await Promise.all([a.closed, b.closed]);
    await assert.rejects(access(s.socketPath));
    await server.close(); // a second close is harmless
  });

  test("connections beyond max_clients are closed at admission", async () => {
    const s = startup("two", 2);
    const seen: Socket[] = [];
    const server = await startStoreServer(s, silentLogger(), {
      onConnection: (socket) => seen.push(socket),
    });
    const a = await open(s.socketPath);
    const b = await open(s.socketPath);
    const c = await open(s.socketPath);
    await c.closed;
    assert.equal(seen.length, 2, "only two connections reach the protocol side");
    assert.equal(a.socket.destroyed || b.socket.destroyed, false);
    await server.close();
  });
});
