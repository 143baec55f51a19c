/**
 * What the model is answered with for a tool call: a text, whether it is an error, and the
 * code of an error when the store (or the worker) gave one. Connections, branch pinning and
 * refusals all answer in this shape, never with a thrown error.
 */

/** What the model is told a call gave: the result's text, and whether it is an error. */
export interface ToolAnswer {
  readonly text: string;
  readonly isError: boolean;
  /** The store's (or the worker's) code of an error result, when it has one. */
  readonly code?: string;
}
