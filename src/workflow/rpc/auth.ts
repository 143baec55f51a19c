/**
 * Who may open a worker stream. The matcher does not know how bearer tokens are made: it
 * takes the token from the `authorization` metadata and hands it to an injected verifier
 * (the server's JWT verifier in production, any function in tests), then checks the
 * `worker` grant and the namespace grant, and asks an injected namespace gate whether the
 * namespace may be served (absent under `auto_create = closed` is refused). Each refusal is
 * a typed RpcRefusal carrying a snake_case code and the gRPC status it ends the stream with.
 */

import * as grpc from "@grpc/grpc-js";
import { SkeinError } from "../../common/errors.ts";
import { bearerToken } from "../auth/bearer.ts";

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

/** A refusal of a worker stream: a code the worker prints, and the gRPC status it ends with. */
export class RpcRefusal extends SkeinError {
  readonly grpcStatus: grpc.status;

  constructor(code: string, message: string, grpcStatus: grpc.status) {
    super(code, message, { status: grpcStatusToHttp(grpcStatus) });
    this.name = "RpcRefusal";
    this.grpcStatus = grpcStatus;
  }
}

function grpcStatusToHttp(status: grpc.status): number {
  switch (status) {
    case grpc.status.UNAUTHENTICATED:
      return 401;
    case grpc.status.PERMISSION_DENIED:
      return 403;
    case grpc.status.NOT_FOUND:
      return 404;
    default:
      return 400;
  }
}

/** The bearer in `authorization: Bearer <token>` metadata, or a refusal. */
export function bearerFrom(metadata: grpc.Metadata): string {
  const values = metadata.get("authorization");
  const header = values.length === 1 ? String(values[0]) : undefined;
  const token = bearerToken(header);
  if (token === undefined) {
    throw new RpcRefusal(
      "unauthenticated",
      "missing or malformed bearer: expected authorization metadata 'Bearer <token>'",
      grpc.status.UNAUTHENTICATED,
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
    throw new RpcRefusal("unauthenticated", "invalid bearer", grpc.status.UNAUTHENTICATED);
  }
  if (!principal.worker) {
    throw new RpcRefusal(
      "forbidden",
      `bearer of ${JSON.stringify(principal.subject)} lacks the worker grant`,
      grpc.status.PERMISSION_DENIED,
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
    throw new RpcRefusal(
      "forbidden",
      `bearer of ${JSON.stringify(principal.subject)} has no grant for namespace ${JSON.stringify(namespace)}`,
      grpc.status.PERMISSION_DENIED,
    );
  }
  if (!(await gate(namespace, principal.subject))) {
    throw new RpcRefusal(
      "namespace_not_found",
      `namespace ${JSON.stringify(namespace)} does not exist and automatic creation is closed`,
      grpc.status.NOT_FOUND,
    );
  }
}
