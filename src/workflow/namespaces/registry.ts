/**
 * The namespace registry: the one role that decides whether a namespace exists, may be
 * created, and which namespace a request means. The HTTP routes call it for explicit
 * creation and listing; the engine (starting work) and the worker endpoint (serving work)
 * call `use`, which applies `namespaces.auto_create`: `open` creates an absent namespace
 * durably on first use, `closed` refuses it with `namespace_not_found`. `resolve` maps an
 * omitted namespace to `namespaces.default`, which start-up creates. `admit` is `use`
 * without the creation: a request checks it first, refuses bad input, and only then calls
 * `use`, so a request that fails never leaves a namespace behind. `describe` adds what a
 * namespace holds; `delete` is refused while it has runs, or for the default namespace.
 * Names reaching this module are already decoded (trimmed, non-empty).
 */

import { workflowError } from "../errors.ts";
import type { NamespaceRecord, NamespaceStore, NamespaceUsage } from "../persistence/store.ts";

export type AutoCreate = "open" | "closed";

export interface RegistrySettings {
  readonly defaultNamespace: string | undefined;
  readonly autoCreate: AutoCreate;
  /** `namespaces.max_in_flight_activities`: the ceiling a record without its own follows. */
  readonly maxInFlightActivities: number;
  /** `outbox.enabled`: the ceiling is in force only while the outbox is on (spec, Limits). */
  readonly outboxEnabled: boolean;
}

/** A record as the API shows it: durable fields plus the effective settings. */
export interface NamespaceView {
  readonly name: string;
  readonly createdAt: number;
  readonly createdBy: string;
  readonly maxInFlightActivities: number;
  /** Whether that ceiling is in force (it is only while `outbox.enabled`). */
  readonly ceilingInForce: boolean;
}

/** Who asks for a creation; recorded on the namespace. */
export const SERVER_SUBJECT = "skein";

export class NamespaceRegistry {
  readonly #store: NamespaceStore;
  readonly settings: RegistrySettings;

  constructor(store: NamespaceStore, settings: RegistrySettings) {
    this.#store = store;
    this.settings = settings;
  }

  /** Creates the default namespace when one is configured; called once at start-up. */
  async createDefault(): Promise<NamespaceView | undefined> {
    const name = this.settings.defaultNamespace;
    if (name === undefined) return undefined;
    return (await this.create(name, SERVER_SUBJECT)).namespace;
  }

  /** Explicit creation: works whatever `auto_create` says; idempotent. */
  async create(
    name: string,
    subject: string,
  ): Promise<{ namespace: NamespaceView; created: boolean }> {
    const { record, created } = await this.#store.create({
      name,
      createdBy: subject,
      createdAt: Date.now(),
    });
    return { namespace: this.view(record), created };
  }

  /** The namespace a request means: the one it names, else the configured default. */
  resolve(name: string | undefined): string {
    if (name !== undefined) return name;
    if (this.settings.defaultNamespace !== undefined) return this.settings.defaultNamespace;
    throw workflowError(
      "namespace_required",
      "the request names no namespace and namespaces.default is not set",
    );
  }

  /**
   * A namespace about to be used for work (starting a workflow, serving a task queue):
   * returns it, creating it first when absent and `auto_create` is open.
   */
  async use(name: string, subject: string): Promise<NamespaceView> {
    const existing = await this.admit(name);
    return existing ?? (await this.create(name, subject)).namespace;
  }

  /**
   * Whether work may go to `name`, creating nothing: the namespace when it exists,
   * undefined when `use` would create it, `namespace_not_found` when `auto_create` is closed.
   */
  async admit(name: string): Promise<NamespaceView | undefined> {
    const existing = await this.#store.get(name);
    if (existing !== undefined) return this.view(existing);
    if (this.settings.autoCreate === "closed") {
      throw workflowError(
        "namespace_not_found",
        `namespace ${JSON.stringify(name)} does not exist and namespaces.auto_create is ` +
          "closed; create it first (`skein namespace create NAME`)",
      );
    }
    return undefined;
  }

  /** The namespace with what it holds; `namespace_not_found` when absent. */
  async describe(name: string): Promise<{ view: NamespaceView; usage: NamespaceUsage }> {
    const record = await this.#store.get(name);
    if (record === undefined) throw notFound(name);
    return { view: this.view(record), usage: await this.#store.usage(name) };
  }

  /**
   * Deletes an empty namespace and its definitions. Refused with `namespace_not_empty` while
   * it has runs (their histories belong to it), `namespace_is_default` for the default.
   */
  async delete(name: string): Promise<{ view: NamespaceView; definitions: number }> {
    if (name === this.settings.defaultNamespace) {
      throw workflowError(
        "namespace_is_default",
        `namespace ${JSON.stringify(name)} is namespaces.default; start-up would create it again`,
      );
    }
    const r = await this.#store.delete(name);
    if (r.outcome === "absent") throw notFound(name);
    if (r.outcome === "has_runs") {
      throw workflowError(
        "namespace_not_empty",
        `namespace ${JSON.stringify(name)} has ${r.runs} run${r.runs === 1 ? "" : "s"}; ` +
          "a namespace is deleted only once it has none",
      );
    }
    return { view: this.view(r.record), definitions: r.definitions };
  }

  async get(name: string): Promise<NamespaceView | undefined> {
    const record = await this.#store.get(name);
    return record === undefined ? undefined : this.view(record);
  }

  /** Every namespace `visible` admits, ordered by name. */
  async list(visible: (name: string) => boolean): Promise<NamespaceView[]> {
    return (await this.#store.list()).filter((r) => visible(r.name)).map((r) => this.view(r));
  }

  private view(record: NamespaceRecord): NamespaceView {
    return {
      name: record.name,
      createdAt: record.createdAt,
      createdBy: record.createdBy,
      maxInFlightActivities: record.maxInFlightActivities ?? this.settings.maxInFlightActivities,
      ceilingInForce: this.settings.outboxEnabled,
    };
  }
}

function notFound(name: string) {
  return workflowError(
    "namespace_not_found",
    `namespace ${JSON.stringify(name)} does not exist (see \`skein namespace list\`)`,
  );
}
