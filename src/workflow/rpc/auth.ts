/**
 * Who may open a worker stream. The matcher does not know how bearer tokens are made: it
 * takes the token from the `authorization` metadata and hands it to an injected verifier
 * (the server's JWT verifier in production, any function in tests), then checks the
 * `worker` grant and the namespace grant, and asks an injected namespace gate whether the
 * namespace may be served (absent under `auto_create = closed` is refused). Each refusal is
 * a StreamRefusal of the catalogue (src/workflow/errors.ts): its code and its gRPC status.
 */

import type * as grpc from "@grpc/grpc-js";
import { bearerToken } from "../auth/bearer.ts";
import { streamRefusal } from "../errors.ts";

/**
 * What a verified bearer says about its holder: the fields of the server's token Principal
 * that the matcher reads (the server's verifier can be passed as it is).
 */
export interface Principal {
  readonly subject: string;
  readonly worker: boolean;
  /** `"*"` (every namespace) or the granted names. */
  readonly namespaces: "*" | ReadonlySet<string>;
}

/** Verifies a bearer token; rejects (any error) when it is not valid. */
export type VerifyToken = (token: string) => Promise<Principal>;

/**
 * Whether work may be served in `namespace` by `subject`: true when it exists or was created
 * now (`auto_create = open`); false when it is absent and automatic creation is closed.
 */
export type NamespaceGate = (namespace: string, subject: string) => Promise<boolean>;

/** The bearer in `authorization: Bearer <token>` metadata, or a refusal. */
export function bearerFrom(metadata: grpc.Metadata): string {
  const values = metadata.get("authorization");
  const header = values.length === 1 ? String(values[0]) : undefined;
  const token = bearerToken(header);
  if (token === undefined) {
    throw streamRefusal(
      "unauthenticated",
      "missing or malformed bearer: expected authorization metadata 'Bearer <token>'",
    );
  }
  return token;
}

export async function authenticate(verify: VerifyToken, metadata: grpc.Metadata) {
  const token = bearerFrom(metadata);
  let principal: Principal;
  try {
    principal = await verify(token);
  } catch {
    throw streamRefusal("unauthenticated", "invalid bearer");
  }
  if (!principal.worker) {
    throw streamRefusal(
      "forbidden",
      `bearer of ${JSON.stringify(principal.subject)} lacks the worker grant`,
    );
  }
  return principal;
}

export async function admitNamespace(
  principal: Principal,
  namespace: string,
  gate: NamespaceGate,
): Promise<void> {
  if (principal.namespaces !== "*" && !principal.namespaces.has(namespace)) {
    throw streamRefusal(
      "forbidden",
      `bearer of ${JSON.stringify(principal.subject)} has no grant for namespace ${JSON.stringify(namespace)}`,
    );
  }
  if (!(await gate(namespace, principal.subject))) {
    throw streamRefusal(
      "namespace_not_found",
      `namespace ${JSON.stringify(namespace)} does not exist and automatic creation is closed`,
    );
  }
}
