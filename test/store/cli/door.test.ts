import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../../../src/common/log.ts";
import { doorCommand } from "../../../src/store/cli/door.ts";
import { addClient, runIdp } from "../idp/support.ts";
import { assertRefusal, runCommand, start, waitFor } from "./harness.ts";

let root: string;
let secretFile: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), "skein-door-"));
  secretFile = join(root, "door.secret");
  await writeFile(secretFile, "door-app-secret\n", { mode: 0o600 });
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

const door = (over: Record<string, unknown> = {}, idp: Record<string, unknown> = {}) => ({
  listen: "127.0.0.1:0",
  origin: "https://console.example",
  files: "/srv/console",
  stores: { main: "/run/skein/main.sock" },
  idp: {
    issuer: "https://idp.example",
    client_id: "console",
    secret_file: secretFile,
    redirect: "https://console.example/callback",
    ...idp,
  },
  ...over,
});

const MESSAGE = "the door configuration is not valid: ";
let n = 0;
async function file(content: unknown): Promise<string> {
  const path = join(root, `door-${n++}.json`);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("skein-store door: refusals", () => {
  const rows: [string, () => Promise<unknown>, Record<string, string>, string][] = [
    [
      "public listen",
      async () => door({ listen: "0.0.0.0:8080" }),
      {},
      "listen: listen must be a loopback address behind a TLS proxy",
    ],
    ["unknown top-level field", async () => door({ extra: 1 }), {}, "extra: unknown field"],
    ["unknown idp field", async () => door({}, { scope: "x" }), {}, "idp.scope: unknown field"],
    [
      "redirect mismatch",
      async () => door({}, { redirect: "https://console.example/cb" }),
      {},
      "idp.redirect: must equal origin followed by /callback",
    ],
    [
      "bad environment variable",
      async () => door(),
      { SERVICE_SESSION_SECONDS: "0" },
      "SERVICE_SESSION_SECONDS: must be a positive integer",
    ],
    [
      "connect above whole request",
      async () => door(),
      { SERVICE_IDP_CONNECT_TIMEOUT_MS: "6000", SERVICE_IDP_TIMEOUT_MS: "5000" },
      "SERVICE_IDP_CONNECT_TIMEOUT_MS: must not exceed",
    ],
    [
      "missing secret file",
      async () => door({}, { secret_file: join(root, "absent.secret") }),
      {},
      "idp.secret_file: credential file",
    ],
    [
      "secret file of two lines",
      async () => {
        await writeFile(join(root, "two.secret"), "line-one-secret\nline-two-secret\n");
        return door({}, { secret_file: join(root, "two.secret") });
      },
      {},
      "must hold exactly one line",
    ],
    ["not JSON", async () => "{", {}, "not valid JSON"],
    ["file too large", async () => " ".repeat(1048577), {}, "larger than 1048576 bytes"],
  ];
  for (const [name, content, env, text] of rows) {
    test(name, async () => {
      const path = await file(await content());
      const r = await runCommand(doorCommand({ env }), [path]);
      const code =
        name === "file too large"
          ? "config_file_too_large"
          : name.includes("secret")
            ? "invalid_credential_file"
            : "door_config_invalid";
      assertRefusal(r, "door", code, `${MESSAGE}`);
      assert.ok(r.err.includes(text), r.err);
      assert.ok(
        !r.err.includes("secret\n") && !r.err.includes("line-one-secret"),
        "no secret shown",
      );
    });
  }
});

describe("skein-store door: a listen address in use", () => {
  test("is a refusal, exit 2", async () => {
    // Discovery comes before listening: a real issuer, so the listen step is the one refused.
    const idp = await runIdp();
    addClient(idp, "console");
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
    const port = (taken.address() as AddressInfo).port;
    try {
      const path = await file(door({ listen: `127.0.0.1:${port}` }, { issuer: idp.issuer }));
      const r = await runCommand(
        doorCommand({ env: {}, logger: silentLogger, until: () => new Promise(() => {}) }),
        [path],
      );
      assertRefusal(
        r,
        "door",
        "door_config_invalid",
        `${MESSAGE}listen: cannot listen (EADDRINUSE)`,
      );
    } finally {
      taken.close();
    }
  });
});

describe("skein-store door (real process)", () => {
  test("an issuer that does not answer refuses start-up before listening", async () => {
    const dead = createServer();
    await new Promise<void>((done) => dead.listen(0, "127.0.0.1", done));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((done) => dead.close(() => done()));
    const path = await file(door({}, { issuer: `http://127.0.0.1:${port}` }));
    const r = await runCommand(doorCommand({ env: {}, logger: silentLogger }), [path]);
    assertRefusal(r, "door", "endpoint_refused", "idp.issuer: endpoint_refused: ");
  });

  test("listens on its loopback address after its checks, and stops on SIGTERM", async () => {
    const idp = await runIdp();
    addClient(idp, "console");
    const path = await file(door({}, { issuer: idp.issuer }));
    const running = start(["door", path], { SKEIN_LOG_LEVEL: "info" });
    let port = 0;
    await waitFor(
      running,
      () => {
        const m = /"port":(\d+)/.exec(running.stderr());
        if (m) port = Number(m[1]);
        return port > 0;
      },
      "the door's listener",
    );
    const status = await new Promise<number>((done, fail) => {
      request({ host: "127.0.0.1", port, path: "/nothing-here" }, (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      })
        .on("error", fail)
        .end();
    });
    assert.equal(status, 404);
    running.child.kill("SIGTERM");
    assert.equal((await running.exited).code, 0);
    assert.ok(!running.stderr().includes("door-app-secret"), "the secret is never logged");
  });
});
