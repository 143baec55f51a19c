import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { SkeinError } from "../../../src/common/errors.ts";
import { type AutoCreate, NamespaceRegistry } from "../../../src/workflow/namespaces/registry.ts";
import { SqliteWorkflowStore } from "../../../src/workflow/persistence/sqlite/store.ts";

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function registry(autoCreate: AutoCreate, defaultNamespace?: string) {
  const dir = await mkdtemp(join(tmpdir(), "skein-registry-"));
  dirs.push(dir);
  const file = join(dir, "skein.db");
  const settings = {
    autoCreate,
    defaultNamespace,
    maxInFlightActivities: 1024,
    outboxEnabled: false,
  };
  const store = SqliteWorkflowStore.open(file);
  return {
    registry: new NamespaceRegistry(store.namespaces, settings),
    store,
    /** The same database, opened again: what a restarted server would see. */
    reopen: () => {
      const again = SqliteWorkflowStore.open(file);
      return { registry: new NamespaceRegistry(again.namespaces, settings), store: again };
    },
  };
}

function isCode(code: string) {
  return (error: unknown) => error instanceof SkeinError && error.code === code;
}

describe("namespace registry: namespaces.auto_create", () => {
  test("open: first use of an absent namespace creates it durably", async () => {
    const r = await registry("open");
    const used = await r.registry.use("fresh", "worker-7");
    assert.equal(used.name, "fresh");
    assert.equal(used.createdBy, "worker-7");
    await r.store.close();
    const again = r.reopen();
    assert.equal((await again.registry.get("fresh"))?.createdBy, "worker-7");
    await again.store.close();
  });

  test("closed: use of an absent namespace is refused with namespace_not_found (404)", async () => {
    const r = await registry("closed");
    await assert.rejects(r.registry.use("absent", "someone"), (error: unknown) => {
      assert.ok(isCode("namespace_not_found")(error));
      assert.equal((error as SkeinError).status, 404);
      assert.match((error as SkeinError).message, /"absent" does not exist.*auto_create is closed/);
      return true;
    });
    assert.equal(await r.registry.get("absent"), undefined, "nothing was created");
    await r.store.close();
  });

  for (const mode of ["open", "closed"] as const) {
    test(`${mode}: explicit creation works, then use finds the namespace`, async () => {
      const r = await registry(mode);
      assert.equal((await r.registry.create("made", "admin")).created, true);
      assert.equal((await r.registry.use("made", "someone")).createdBy, "admin");
      await r.store.close();
    });
  }
});

describe("namespace registry: default namespace", () => {
  test("createDefault creates namespaces.default once (closed mode too)", async () => {
    const r = await registry("closed", "home");
    assert.equal((await r.registry.createDefault())?.name, "home");
    assert.equal((await r.registry.get("home"))?.createdBy, "skein");
    await r.registry.createDefault();
    assert.equal((await r.registry.list(() => true)).length, 1);
    await r.store.close();
  });

  test("resolve: an omitted namespace means the default", async () => {
    const r = await registry("open", "home");
    assert.equal(r.registry.resolve(undefined), "home");
    assert.equal(r.registry.resolve("other"), "other");
    await r.store.close();
  });

  test("resolve without a default: namespace_required", async () => {
    const r = await registry("open");
    assert.throws(() => r.registry.resolve(undefined), isCode("namespace_required"));
    assert.equal(await r.registry.createDefault(), undefined);
    await r.store.close();
  });

  test("records carry the effective claim ceiling from the configuration", async () => {
    const r = await registry("open");
    await r.registry.create("a", "admin");
    const [view] = await r.registry.list(() => true);
    assert.equal(view?.maxInFlightActivities, 1024);
    assert.equal(view?.ceilingInForce, false, "outbox.enabled is false here");
    await r.store.close();
  });
});
