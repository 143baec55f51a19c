/**
 * The definition registry: decodes a submitted document into a typed definition (refusals
 * name the step, see definitions/decode.ts), records it per namespace by content hash, and
 * looks definitions up by version (what a run pinned, for start and for recovery) or by
 * name (the latest registered), and lists each name's latest version. Decoded definitions are cached by (namespace, version):
 * a version is immutable, so the cache is never stale.
 */

import type { DocumentFormat } from "../../common/document-text.ts";
import { decodeDefinition, parseDefinition } from "../definitions/index.ts";
import type { WorkflowDefinition } from "../definitions/types.ts";
import { workflowError } from "../errors.ts";
import type {
  DefinitionRecord,
  DefinitionStore,
  DefinitionSummary,
} from "../persistence/workflows.ts";

/** A document as submitted: text in a format, or an already parsed JSON object. */
export type SubmittedDefinition =
  | { readonly text: string; readonly format: DocumentFormat }
  | { readonly value: unknown };

export interface Registered {
  readonly definition: WorkflowDefinition;
  readonly record: DefinitionRecord;
  readonly created: boolean;
}

export class DefinitionRegistry {
  readonly #store: DefinitionStore;
  readonly #cache = new Map<string, WorkflowDefinition>();

  constructor(store: DefinitionStore) {
    this.#store = store;
  }

  /**
   * Decodes a submitted document (`invalid_definition` when refused) without recording it,
   * so a caller can refuse bad input before it touches the namespace.
   */
  decode(submitted: SubmittedDefinition): WorkflowDefinition {
    return "text" in submitted
      ? parseDefinition(submitted.text, submitted.format)
      : decodeDefinition(submitted.value);
  }

  /** Records a decoded definition in the namespace. */
  async register(
    namespace: string,
    definition: WorkflowDefinition,
    subject: string,
  ): Promise<Registered> {
    const { record, created } = await this.#store.register({
      namespace,
      name: definition.name,
      version: definition.version,
      canonical: definition.canonical,
      registeredAt: Date.now(),
      registeredBy: subject,
    });
    this.#cache.set(`${namespace}\0${definition.version}`, definition);
    return { definition, record, created };
  }

  /** The definition of `version` in the namespace; `definition_not_found` when absent. */
  async byVersion(namespace: string, version: string): Promise<WorkflowDefinition> {
    const key = `${namespace}\0${version}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const record = await this.#store.get(namespace, version);
    if (record === undefined) {
      throw workflowError(
        "definition_not_found",
        `no definition version ${version} in namespace ${JSON.stringify(namespace)}`,
      );
    }
    return this.#decoded(record);
  }

  /** The latest registered version of `name`; `definition_not_found` when none. */
  async latest(namespace: string, name: string): Promise<WorkflowDefinition> {
    const record = await this.#store.latest(namespace, name);
    if (record === undefined) {
      throw workflowError(
        "definition_not_found",
        `no definition named ${JSON.stringify(name)} in namespace ${JSON.stringify(namespace)}; ` +
          "register it first (skein workflow register FILE)",
      );
    }
    return this.#decoded(record);
  }

  #decoded(record: DefinitionRecord): WorkflowDefinition {
    const key = `${record.namespace}\0${record.version}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const definition = parseDefinition(record.canonical, "json");
    // The canonical form hashes to its own version; anything else is a corrupt row.
    if (definition.version !== record.version) {
      throw workflowError(
        "internal",
        `stored definition ${record.version} hashes to ${definition.version}`,
      );
    }
    this.#cache.set(key, definition);
    return definition;
  }

  /** Each definition name of the namespace with its latest version, ordered by name. */
  list(namespace: string): Promise<DefinitionSummary[]> {
    return this.#store.list(namespace);
  }

  /** Every version of `name`, the latest registered first; `definition_not_found` when none. */
  async versions(namespace: string, name: string): Promise<DefinitionRecord[]> {
    const records = await this.#store.versions(namespace, name);
    if (records.length === 0) {
      throw workflowError(
        "definition_not_found",
        `no definition named ${JSON.stringify(name)} in namespace ${JSON.stringify(namespace)}`,
      );
    }
    return records;
  }
}
