/**
 * The credential cluster nodes present to each other. Node-to-node routes (the task relay's
 * `/cluster/relay/*`) act for the whole cluster: they record results in any run and place
 * attempts with any worker, so no grant a person can be given (not even every namespace, nor
 * the worker grant) may open them. A node credential carries the dedicated `node` claim,
 * which `skein token issue` cannot set, and no grant, so it opens nothing else either. Each
 * node mints its own at start-up from the cluster's shared signing key and renews it well
 * before it expires.
 */

import type { KeyObject } from "node:crypto";
import { workflowError } from "../errors.ts";
import { issueNodeToken, type Principal } from "./tokens.ts";

/** A node credential's lifetime: a leaked one is useless this long after its node stopped. */
export const NODE_CREDENTIAL_TTL_SECONDS = 600;
/** A fresh credential is minted once the current one is this old (half its lifetime). */
export const NODE_CREDENTIAL_RENEW_MS = (NODE_CREDENTIAL_TTL_SECONDS * 1000) / 2;

/** This node's credential, minted now and renewed on use once half its lifetime is gone. */
export function nodeCredential(key: KeyObject, nodeId: string): () => Promise<string> {
  const mint = () => ({
    token: issueNodeToken(key, nodeId, NODE_CREDENTIAL_TTL_SECONDS),
    at: Date.now(),
  });
  let current = mint();
  return () => {
    if (Date.now() - current.at > NODE_CREDENTIAL_RENEW_MS) current = mint();
    return current.token;
  };
}

/** Refuses (403) a bearer that is not a node credential. */
export function requireNode(principal: Principal): void {
  if (principal.node === undefined) {
    throw workflowError(
      "forbidden",
      "node-to-node route: only a cluster node's credential is accepted",
    );
  }
}
