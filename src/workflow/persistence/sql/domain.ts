/**
 * The domain areas of a `WorkflowStore` (namespaces, deployments, transcripts, definitions
 * and runs), each the shared module over one driver. Both backends' store classes extend
 * this and add only what is theirs: opening, migrating, closing, backup, the cluster.
 */

import type { SqlDatabase } from "./database.ts";
import { SqlDefinitionStore } from "./definitions.ts";
import { SqlDeploymentStore } from "./deployments.ts";
import { SqlNamespaceStore } from "./namespaces.ts";
import { SqlRunStore } from "./runs.ts";
import { SqlTranscriptStore } from "./transcripts.ts";

export abstract class SqlDomainStores {
  readonly namespaces: SqlNamespaceStore;
  readonly deployments: SqlDeploymentStore;
  readonly transcripts: SqlTranscriptStore;
  readonly workflows: { readonly definitions: SqlDefinitionStore; readonly runs: SqlRunStore };

  constructor(db: SqlDatabase) {
    this.namespaces = new SqlNamespaceStore(db);
    this.deployments = new SqlDeploymentStore(db);
    this.transcripts = new SqlTranscriptStore(db);
    this.workflows = { definitions: new SqlDefinitionStore(db), runs: new SqlRunStore(db) };
  }
}
