/**
 * The deployments role: durable records (through the WorkflowStore) and this node's
 * supervisor, put together so every endpoint is one call. A write is committed first and
 * then applied locally before it answers (the spec's "the node acts on the new desired
 * state before the response"). Writes to one name are serialised in this process.
 *
 * Node placement: a record whose `node` is null runs on every node; a record with a `node`
 * runs only on the node whose `cluster.node_id` equals it. Other nodes keep no process.
 *
 * Every call names the caller's Scope, checked under the name's lock so a record cannot
 * change hands between the check and the write (see docs/deployments.md for the rule).
 */

import { join } from "node:path";
import type { Logger } from "../../common/log.ts";
import { parseWorkerArgs } from "../../worker/verb.ts";
import { workflowError } from "../errors.ts";
import type { DeploymentRow, DeploymentStore } from "../persistence/store.ts";
import type { LaunchSpec } from "../supervisor/launcher.ts";
import type { ProcessStatus, Supervisor } from "../supervisor/supervisor.ts";
import { tokenFileRefusal } from "./credentials.ts";
import { binaryIdentity, deploymentIdentity } from "./identity.ts";
import {
  type Deployment,
  type DeploymentBody,
  type Desired,
  decodeStored,
  encodeStored,
  type StoredDocument,
  sameLaunch,
  type Undecodable,
} from "./record.ts";
import { checkVerb } from "./verb.ts";

export type PutOutcome = "created" | "updated" | "unchanged";

/**
 * The namespaces a caller may act in. A record is the caller's when the caller may act in
 * every namespace it serves; an undecodable row's namespaces are unknown, so it is only a
 * caller's with `all` (a grant of "*").
 */
export interface Scope {
  readonly all: boolean;
  may(namespace: string): boolean;
}

/** The server itself (start-up): every record. */
export const EVERY_NAMESPACE: Scope = { all: true, may: () => true };

function owns(scope: Scope, read: ReturnType<typeof decodeRow>): boolean {
  return read.ok ? read.deployment.namespaces.every((n) => scope.may(n)) : scope.all;
}

export interface DeploymentServiceOptions {
  readonly store: DeploymentStore;
  readonly supervisor: Supervisor;
  readonly nodeId: string;
  readonly dataDir: string;
  readonly logger: Logger;
}

export interface ManagedWorker {
  readonly deployment: Deployment;
  readonly runsHere: boolean;
  readonly process: ProcessStatus | undefined;
}

/** Where a deployment's worker output goes: one file per deployment under the data dir. */
export function logFileOf(dataDir: string, name: string): string {
  return join(dataDir, "deployments", "logs", `${encodeURIComponent(name)}.log`);
}

export class DeploymentService {
  readonly #o: DeploymentServiceOptions;
  readonly #locks = new Map<string, Promise<unknown>>();

  #reconciling: Promise<void> | undefined;
  #reconcileAgain = false;

  constructor(options: DeploymentServiceOptions) {
    this.#o = options;
  }

  get nodeId(): string {
    return this.#o.nodeId;
  }

  /** This node's data directory (where the deployments' logs are). */
  get dataDir(): string {
    return this.#o.dataDir;
  }

  async put(
    name: string,
    body: DeploymentBody,
    scope: Scope,
  ): Promise<{ outcome: PutOutcome; deployment: Deployment; process: ProcessStatus | undefined }> {
    const outside = body.namespaces.find((n) => !scope.may(n));
    if (outside !== undefined) {
      throw workflowError(
        "forbidden",
        `the bearer's grants do not include namespace ${JSON.stringify(outside)}`,
      );
    }
    const verb = await checkVerb(body, this.#o.dataDir);
    return this.#locked(name, async () => {
      const existing = await this.#read(name);
      // Replacing a record takes every namespace it served, too: else a grant for one
      // namespace could take over (and stop) another namespace's worker.
      if (existing !== undefined && !owns(scope, existing)) {
        throw workflowError(
          "forbidden",
          `the deployment ${JSON.stringify(name)} serves namespaces outside the bearer's grants`,
        );
      }
      const next: Omit<StoredDocument, "revision"> = {
        artifact: body.artifact,
        namespaces: body.namespaces,
        task_queue: body.task_queue,
        desired: body.desired,
        node: body.node,
        binary: binaryIdentity(),
        worker: { kind: verb.kind, name: verb.workerName },
      };
      let outcome: PutOutcome;
      let revision: number;
      if (existing === undefined || !existing.ok) {
        outcome = existing === undefined ? "created" : "updated";
        revision = 1;
      } else if (sameLaunch(existing.deployment, next)) {
        revision = existing.deployment.revision;
        outcome = existing.deployment.desired === next.desired ? "unchanged" : "updated";
      } else {
        revision = existing.deployment.revision + 1;
        outcome = "updated";
      }
      let deployment: Deployment;
      if (outcome === "unchanged" && existing?.ok) {
        deployment = existing.deployment;
      } else {
        const row = await this.#o.store.put(name, encodeStored({ ...next, revision }), Date.now());
        deployment = this.#decodeOwn(row);
      }
      return { outcome, deployment, process: await this.#apply(deployment) };
    });
  }

  /** A record outside `scope` reads as absent: others' records are not revealed. */
  async get(name: string, scope: Scope): Promise<Deployment> {
    const read = await this.#read(name);
    if (read === undefined || !owns(scope, read)) throw notFound(name);
    if (!read.ok) throw undecodable(read.undecodable);
    return read.deployment;
  }

  async list(scope: Scope): Promise<{ deployments: Deployment[]; undecodable: Undecodable[] }> {
    const deployments: Deployment[] = [];
    const bad: Undecodable[] = [];
    for (const row of await this.#o.store.list()) {
      const read = decodeRow(row);
      if (!owns(scope, read)) continue;
      if (read.ok) deployments.push(read.deployment);
      else bad.push(read.undecodable);
    }
    return { deployments, undecodable: bad };
  }

  async setDesired(
    name: string,
    desired: Desired,
    scope: Scope,
  ): Promise<{ deployment: Deployment; process: ProcessStatus | undefined }> {
    return this.#locked(name, async () => {
      const current = await this.get(name, scope);
      let deployment = current;
      if (current.desired !== desired) {
        const row = await this.#o.store.put(
          name,
          encodeStored({ ...current, desired }),
          Date.now(),
        );
        deployment = this.#decodeOwn(row);
      }
      return { deployment, process: await this.#apply(deployment) };
    });
  }

  /**
   * Stops and forgets this node's process, then removes the record. A stop failure is
   * logged and the record is still deleted (the spec's rule).
   */
  async delete(name: string, scope: Scope): Promise<{ deployment: Deployment | Undecodable }> {
    return this.#locked(name, async () => {
      const read = await this.#read(name);
      if (read === undefined || !owns(scope, read)) throw notFound(name);
      try {
        await this.#o.supervisor.forget(name);
      } catch (error) {
        this.#o.logger.error(
          { err: error, deployment: name },
          "stopping the deployment's worker failed; deleting the record anyway",
        );
      }
      const removed = await this.#o.store.delete(name);
      if (removed === undefined) throw notFound(name);
      return { deployment: read.ok ? read.deployment : read.undecodable };
    });
  }

  async managed(scope: Scope): Promise<{ managed: ManagedWorker[]; undecodable: Undecodable[] }> {
    const { deployments, undecodable: bad } = await this.list(scope);
    return {
      managed: deployments.map((deployment) => ({
        deployment,
        runsHere: this.#runsHere(deployment),
        process: this.#o.supervisor.status(deployment.name),
      })),
      undecodable: bad,
    };
  }

  /** Server start-up: brings every record of this node to its desired state. */
  async startAll(): Promise<void> {
    const { deployments, undecodable: bad } = await this.list(EVERY_NAMESPACE);
    for (const u of bad) {
      this.#o.logger.warn(
        { deployment: u.name, reason: u.reason },
        "deployment row cannot be decoded; not supervised",
      );
    }
    await Promise.all(
      deployments.map((d) =>
        this.#locked(d.name, () => this.#apply(d)).catch((error) =>
          this.#o.logger.error(
            { err: error, deployment: d.name },
            "cannot apply deployment at start",
          ),
        ),
      ),
    );
  }

  /**
   * Another node of the cluster changed a record: every record is applied again, and a
   * process whose record is gone is stopped and forgotten.
   */
  reconcile(): Promise<void> {
    // Notifications coalesce: one more pass after the one in flight covers them all.
    if (this.#reconciling !== undefined) {
      this.#reconcileAgain = true;
      return this.#reconciling;
    }
    this.#reconciling = this.#reconcileOnce().finally(() => {
      this.#reconciling = undefined;
      if (this.#reconcileAgain) {
        this.#reconcileAgain = false;
        void this.reconcile();
      }
    });
    return this.#reconciling;
  }

  async #reconcileOnce(): Promise<void> {
    await this.startAll();
    const { deployments } = await this.list(EVERY_NAMESPACE);
    const names = new Set(deployments.map((d) => d.name));
    for (const name of this.#o.supervisor.names()) {
      if (names.has(name)) continue;
      await this.#locked(name, () => this.#o.supervisor.forget(name)).catch((error) =>
        this.#o.logger.error({ err: error, deployment: name }, "cannot stop a removed deployment"),
      );
    }
  }

  #runsHere(d: Deployment): boolean {
    return d.node === null || d.node === this.#o.nodeId;
  }

  async #apply(d: Deployment): Promise<ProcessStatus | undefined> {
    if (!this.#runsHere(d)) {
      await this.#o.supervisor.forget(d.name);
      return undefined;
    }
    if (d.desired === "running") await this.#refuseOwnCredentials(d);
    return this.#o.supervisor.apply(d.name, d.desired === "running" ? this.#launch(d) : null);
  }

  /**
   * A record stored before the credential rule existed is held to it at launch, so no
   * worker ever starts with the server's own key or token (PUT checks new records).
   */
  async #refuseOwnCredentials(d: Deployment): Promise<void> {
    let tokenFile: string | undefined;
    try {
      tokenFile = parseWorkerArgs(d.artifact.verb.slice(1)).tokenFile;
    } catch {
      return; // a verb the worker refuses launches nothing that could use a credential
    }
    if (tokenFile === undefined) return;
    const reason = await tokenFileRefusal(tokenFile, this.#o.dataDir);
    if (reason === undefined) return;
    await this.#o.supervisor.apply(d.name, null);
    throw workflowError(
      "token_file_refused",
      `deployment ${JSON.stringify(d.name)} is not started: --token-file ${tokenFile} ${reason}`,
    );
  }

  #launch(d: Deployment): LaunchSpec {
    return {
      name: d.name,
      revision: d.revision,
      command: d.binary.path,
      args: [d.binary.entry, ...d.artifact.verb],
      // The worker stops if its parent is ever another process than this one (parent-watch).
      env: {
        SKEIN_DEPLOYMENT: deploymentIdentity(d.name, d.revision),
        SKEIN_SUPERVISOR_PID: String(process.pid),
      },
      logFile: logFileOf(this.#o.dataDir, d.name),
    };
  }

  async #read(name: string) {
    const row = await this.#o.store.get(name);
    return row === undefined ? undefined : decodeRow(row);
  }

  #decodeOwn(row: DeploymentRow): Deployment {
    const read = decodeRow(row);
    if (!read.ok) throw undecodable(read.undecodable);
    return read.deployment;
  }

  #locked<T>(name: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(name) ?? Promise.resolve();
    const result = previous.then(work);
    const tail = result.catch(() => {});
    this.#locks.set(name, tail);
    tail.then(() => {
      if (this.#locks.get(name) === tail) this.#locks.delete(name);
    });
    return result;
  }
}

function decodeRow(row: DeploymentRow) {
  return decodeStored(row.name, row.document, {
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  });
}

function notFound(name: string) {
  return workflowError(
    "deployment_not_found",
    `no worker deployment named ${JSON.stringify(name)}`,
  );
}

function undecodable(u: Undecodable) {
  return workflowError(
    "deployment_undecodable",
    `the stored deployment ${JSON.stringify(u.name)} cannot be decoded (${u.reason}); PUT replaces it, DELETE removes it`,
  );
}
