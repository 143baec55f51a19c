/**
 * The grammar of `skein worker KIND DOC [options]`, shared by the worker command that runs it
 * and by the deployments service that checks a deployment's verb before launching it (so the
 * two can never disagree). The verb is parsed strictly (the spec's shape: kind word, document
 * path, then option pairs); option values go through the decoding core so a bad value reads
 * like any other refusal and is a usage error.
 */

import { parseOptions, UsageError } from "../common/cli.ts";
import {
  type Decoder,
  decode,
  envValue,
  finiteNumber,
  oneOf,
  string,
  u32,
} from "../common/decode/index.ts";
import { MAX_CONCURRENCY } from "../protocol/worker-stream/decode.ts";
import { grpcTarget } from "../protocol/worker-stream/grpc.ts";
import { WORKER_KINDS, type WorkerKind } from "./document.ts";

export const WORKER_DEFAULTS = {
  endpoint: "127.0.0.1:7381", // the server's default grpc.listen
  namespace: "default",
  concurrency: 16,
  reconnectInitialBackoffS: 0.5,
  reconnectMaxBackoffS: 30,
  reconnectMaxAttempts: 0,
} as const;

export interface WorkerArgs {
  readonly kind: WorkerKind;
  readonly document: string;
  readonly target: string;
  readonly namespace: string;
  readonly concurrency: number;
  readonly reconnectInitialMs: number;
  readonly reconnectMaxMs: number;
  readonly reconnectMaxAttempts: number;
  readonly tokenFile: string | undefined;
}

const OPTIONS = {
  endpoint: { type: "string" },
  namespace: { type: "string" },
  concurrency: { type: "string" },
  "reconnect-initial-backoff": { type: "string" },
  "reconnect-max-backoff": { type: "string" },
  "reconnect-max-attempts": { type: "string" },
  "token-file": { type: "string" },
} as const;

function option<T>(name: string, decoder: Decoder<T>, text: string | undefined, fallback: T): T {
  if (text === undefined) return fallback;
  const r = decode(decoder, envValue(text));
  if (!r.ok) throw new UsageError(`--${name}: ${r.error.reason}`);
  return r.value;
}

/** Parses the verb after `worker`; throws UsageError. */
export function parseWorkerArgs(args: readonly string[]): WorkerArgs {
  const { values, positionals } = parseOptions(args, OPTIONS, { min: 2, max: 2 });
  const kind = option("kind", oneOf(WORKER_KINDS), positionals[0], "exec");
  const endpoint = values.endpoint ?? WORKER_DEFAULTS.endpoint;
  const target = grpcTarget(endpoint);
  if (target === undefined) {
    throw new UsageError(
      `--endpoint: must be host:port or http://host:port, found ${JSON.stringify(endpoint)}`,
    );
  }
  const namespace = option(
    "namespace",
    string({ minBytes: 1, maxBytes: 256, trim: true }),
    values.namespace,
    WORKER_DEFAULTS.namespace,
  );
  const concurrency = option(
    "concurrency",
    u32({ min: 1, max: MAX_CONCURRENCY }),
    values.concurrency,
    WORKER_DEFAULTS.concurrency,
  );
  const seconds = finiteNumber({ min: 0.001, max: 86_400 });
  const initial = option(
    "reconnect-initial-backoff",
    seconds,
    values["reconnect-initial-backoff"],
    WORKER_DEFAULTS.reconnectInitialBackoffS,
  );
  const max = option(
    "reconnect-max-backoff",
    seconds,
    values["reconnect-max-backoff"],
    Math.max(initial, WORKER_DEFAULTS.reconnectMaxBackoffS),
  );
  if (max < initial) {
    throw new UsageError(
      `--reconnect-max-backoff: must be at least --reconnect-initial-backoff (${initial}), found ${max}`,
    );
  }
  const attempts = option(
    "reconnect-max-attempts",
    u32({ max: 1_000_000 }),
    values["reconnect-max-attempts"],
    WORKER_DEFAULTS.reconnectMaxAttempts,
  );
  return {
    kind,
    document: positionals[1]!,
    target,
    namespace,
    concurrency,
    reconnectInitialMs: Math.round(initial * 1000),
    reconnectMaxMs: Math.round(max * 1000),
    reconnectMaxAttempts: attempts,
    tokenFile: values["token-file"],
  };
}

/** The largest token file read; a token is a few hundred bytes. */
export const MAX_TOKEN_FILE_BYTES = 16_384;
