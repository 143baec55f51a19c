import assert from "node:assert/strict";
import { readFile, stat, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { describe, test } from "node:test";
import { parseConfig } from "../../src/workflow/config/load.ts";
import { until } from "../support/until.ts";
import { adminToken, call, skein, startServe, tempDir, writeConfig } from "./support/server.ts";

describe("skein serve (real process)", () => {
  test("first run writes the template, data dir, signing key and admin token, and says where", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const configFile = join(dir.path, "skein.toml");
    const server = await startServe(configFile);
    try {
      const out = server.stdout();
      const dataDir = join(dir.path, "skein-data");
      assert.match(out, /first run: wrote the template/);
      for (const path of [
        configFile,
        dataDir,
        join(dataDir, "signing-key.pem"),
        join(dataDir, "admin.token"),
      ]) {
        assert.ok(out.includes(path), `stdout names ${path}:\n${out}`);
      }
      assert.match(out, /^listening on http:\/\/127\.0\.0\.1:\d+$/m);
      for (const file of ["signing-key.pem", "admin.token"]) {
        assert.equal((await stat(join(dataDir, file))).mode & 0o777, 0o600, file);
      }
      const template = parseConfig(await readFile(configFile, "utf8"), configFile);
      assert.equal(template.settings.outbox.enabled, true);
      assert.equal(template.settings.deployments.enabled, true);
      assert.equal(template.dataDir, dataDir);
      // The admin token written on first run works, and the template's default exists.
      const token = (await readFile(join(dataDir, "admin.token"), "utf8")).trim();
      const r = await call(server.url, "GET", "/namespaces", { token });
      assert.deepEqual(r.body, { namespaces: [{ name: "default" }] });
      // The template turns the outbox on, so the claim ceiling is in force.
      const records = await call(server.url, "GET", "/namespaces/records", { token });
      assert.deepEqual(records.body.records[0].settings, {
        max_in_flight_activities: 1024,
        ceiling_in_force: true,
      });
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
    // A second start keeps what the first created.
    const again = await startServe(configFile);
    try {
      assert.doesNotMatch(again.stdout(), /first run/);
      assert.match(again.stdout(), /signing key: .* \(existing\)/);
      assert.match(again.stdout(), /admin token: .* \(existing\)/);
    } finally {
      await again.stop();
    }
  });

  const badConfigs: [label: string, toml: string, message: RegExp][] = [
    ["unknown top-level key", "colour = 1", /colour: unknown field/],
    ["unknown key in a table", "[namespaces]\nbogus = true", /namespaces\.bogus: unknown field/],
    ["unknown table", "[outboxes]\nenabled = true", /outboxes: unknown field/],
    [
      "float in an integer key",
      "[namespaces]\nmax_in_flight_activities = 10.0",
      /namespaces\.max_in_flight_activities: expected a whole number/,
    ],
    [
      "auto_create outside open|closed",
      '[namespaces]\nauto_create = "sometimes"',
      /namespaces\.auto_create: must be one of "open", "closed"/,
    ],
    ["not TOML", "data_dir = ", /not valid TOML/],
  ];
  for (const [label, toml, message] of badConfigs) {
    test(`a config with ${label} is refused at start-up, naming the key`, async (t) => {
      const dir = await tempDir();
      t.after(dir.remove);
      const file = join(dir.path, "skein.toml");
      await writeFile(file, toml);
      const r = skein(["serve", "--config", file, "--listen", "127.0.0.1:0"]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, message);
    });
  }

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} shuts down gracefully: prints stopped, exits 0`, async (t) => {
      const dir = await tempDir();
      t.after(dir.remove);
      const server = await startServe(await writeConfig(dir.path));
      const exit = await server.stop(signal);
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.match(server.stdout(), /\nstopped\n$/);
    });
  }

  test("SIGTERM lets a request in flight finish before the server exits", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    // At level info the server logs "shutting down" as its stop begins.
    const server = await startServe(await writeConfig(dir.path), [], { SKEIN_LOG_LEVEL: "info" });
    const token = await adminToken(dir.path);
    const body = JSON.stringify({ name: "late" });
    const url = new URL(`${server.url}/namespaces`);
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        url,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            // The server's 100 Continue says it has parsed the headers: the request is in flight.
            expect: "100-continue",
          },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            text += c;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      // Half the body now; the rest only after the server was told to stop (once the request
      // is in flight) and has said it is shutting down.
      req.on("continue", () => {
        server.child.kill("SIGTERM");
        until("the server to say it is shutting down", () =>
          /shutting down/.test(server.stdout() + server.stderr()),
        ).then(() => req.end(body.slice(5)), reject);
      });
      req.write(body.slice(0, 5));
    });
    const r = await answer;
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { name: "late", created: true });
    assert.deepEqual(await server.exited, { code: 0, signal: null });
  });

  test("a namespace acknowledged before SIGKILL is there after restart", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const config = await writeConfig(dir.path, '[namespaces]\nauto_create = "closed"');
    const first = await startServe(config);
    const token = await adminToken(dir.path);
    const created = await call(first.url, "POST", "/namespaces", { token, body: { name: "kept" } });
    assert.deepEqual(created.body, { name: "kept", created: true });
    const exit = await first.stop("SIGKILL");
    assert.equal(exit.signal, "SIGKILL");

    const second = await startServe(config);
    try {
      const listed = await call(second.url, "GET", "/namespaces", { token });
      assert.deepEqual(listed.body, { namespaces: [{ name: "kept" }] });
      const repeat = await call(second.url, "POST", "/namespaces", {
        token,
        body: { name: "kept" },
      });
      assert.deepEqual(repeat.body, { name: "kept", created: false });
    } finally {
      await second.stop();
    }
  });

  for (const mode of ["open", "closed"] as const) {
    test(`auto_create ${mode}: the default namespace is created at start-up and explicit creation works`, async (t) => {
      const dir = await tempDir();
      t.after(dir.remove);
      const config = await writeConfig(
        dir.path,
        `[namespaces]\ndefault = "main"\nauto_create = "${mode}"`,
      );
      const server = await startServe(config);
      try {
        assert.match(server.stdout(), /^default namespace: main$/m);
        const token = await adminToken(dir.path);
        const made = await call(server.url, "POST", "/namespaces", { token, body: { name: "x" } });
        assert.deepEqual(made.body, { name: "x", created: true });
        const listed = await call(server.url, "GET", "/namespaces", { token });
        assert.deepEqual(listed.body, { namespaces: [{ name: "main" }, { name: "x" }] });
      } finally {
        await server.stop();
      }
    });
  }

  test("a second skein serve on the same data is refused: exit 1", async (t) => {
    const dir = await tempDir();
    t.after(dir.remove);
    const config = await writeConfig(dir.path);
    const first = await startServe(config);
    try {
      const second = skein(["serve", "--config", config, "--listen", "127.0.0.1:0"]);
      assert.equal(second.status, 1);
      assert.match(second.stderr, /skein\.db is in use by another process/);
      // The first one is unaffected.
      assert.equal((await call(first.url, "GET", "/health")).status, 200);
    } finally {
      await first.stop();
    }
  });

  test("a port already in use: exit 1 naming the address", async (t) => {
    const dir = await tempDir();
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    t.after(async () => {
      busy.close();
      await dir.remove();
    });
    const { port } = busy.address() as AddressInfo;
    const config = await writeConfig(dir.path);
    const r = skein(["serve", "--config", config, "--listen", `127.0.0.1:${port}`]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`EADDRINUSE.*127\\.0\\.0\\.1:${port}`));
  });

  test("a usage mistake in serve's options exits 2", () => {
    const r = skein(["serve", "--listen", "nowhere"]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^skein: --listen must be host:port/);
  });
});
