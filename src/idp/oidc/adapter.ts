/**
 * oidc-provider's storage adapter over the identity provider's SQLite file. Its artefacts
 * (sessions, interactions, grants, authorization codes, …) live in one table keyed by model
 * and id, with the secondary lookups oidc-provider needs (by uid, user code, grant id);
 * expired rows read as absent and are swept on write. The `Client` model is read from the
 * clients table the CLI writes, so oidc-provider sees clients added while it runs; the
 * stored `client_secret` is the scrypt hash, compared by the provider's patched
 * `compareClientSecret` (provider.ts).
 */

import type { Adapter, AdapterPayload } from "oidc-provider";
import type { IdpState } from "../state/state.ts";

/** Sweep expired artefacts at most once a minute: cheap, and keeps the table small. */
const SWEEP_INTERVAL_MS = 60_000;

export function clientMetadata(state: IdpState, id: string): AdapterPayload | undefined {
  const client = state.client(id);
  if (client === undefined) return undefined;
  const interactive = client.redirectUris.length > 0;
  return {
    client_id: client.id,
    client_secret: client.secretHash,
    redirect_uris: [...client.redirectUris],
    grant_types: interactive
      ? ["authorization_code", "refresh_token", "client_credentials"]
      : ["client_credentials"],
    response_types: interactive ? ["code"] : [],
    token_endpoint_auth_method: "client_secret_basic",
  };
}

export function sqliteAdapterFactory(state: IdpState): (model: string) => Adapter {
  let lastSweep = 0;
  const db = state.database;
  const find = db.prepare("SELECT payload, expires_at FROM oidc WHERE model = ? AND id = ?");
  const findBy = {
    uid: db.prepare("SELECT payload, expires_at FROM oidc WHERE model = ? AND uid = ?"),
    userCode: db.prepare("SELECT payload, expires_at FROM oidc WHERE model = ? AND user_code = ?"),
  };
  const upsert = db.prepare(
    `INSERT OR REPLACE INTO oidc (model, id, payload, grant_id, uid, user_code, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const sweep = db.prepare("DELETE FROM oidc WHERE expires_at IS NOT NULL AND expires_at < ?");
  const destroy = db.prepare("DELETE FROM oidc WHERE model = ? AND id = ?");
  const revoke = db.prepare("DELETE FROM oidc WHERE grant_id = ?");

  const read = (row: unknown): AdapterPayload | undefined => {
    if (row === undefined) return undefined;
    const { payload, expires_at } = row as { payload: string; expires_at: number | null };
    if (expires_at !== null && expires_at < Date.now()) return undefined;
    return JSON.parse(payload) as AdapterPayload;
  };

  return (model: string): Adapter => {
    if (model === "Client") {
      return {
        async find(id) {
          return clientMetadata(state, id);
        },
        async upsert() {},
        async findByUid() {},
        async findByUserCode() {},
        async consume() {},
        async destroy() {},
        async revokeByGrantId() {},
      };
    }
    return {
      async upsert(id, payload, expiresIn) {
        const now = Date.now();
        if (now - lastSweep > SWEEP_INTERVAL_MS) {
          lastSweep = now;
          sweep.run(now);
        }
        const expiresAt = typeof expiresIn === "number" ? now + expiresIn * 1000 : null;
        upsert.run(
          model,
          id,
          JSON.stringify(payload),
          payload.grantId ?? null,
          payload.uid ?? null,
          payload.userCode ?? null,
          expiresAt,
        );
      },
      async find(id) {
        return read(find.get(model, id));
      },
      async findByUid(uid) {
        return read(findBy.uid.get(model, uid));
      },
      async findByUserCode(userCode) {
        return read(findBy.userCode.get(model, userCode));
      },
      async consume(id) {
        const payload = read(find.get(model, id));
        if (payload === undefined) return;
        const row = find.get(model, id) as { expires_at: number | null };
        upsert.run(
          model,
          id,
          JSON.stringify({ ...payload, consumed: Math.floor(Date.now() / 1000) }),
          payload.grantId ?? null,
          payload.uid ?? null,
          payload.userCode ?? null,
          row.expires_at,
        );
      },
      async destroy(id) {
        destroy.run(model, id);
      },
      async revokeByGrantId(grantId) {
        revoke.run(grantId);
      },
    };
  };
}
