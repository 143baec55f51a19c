/**
 * Workflow definitions: documents (YAML or JSON) decoded into typed, versioned definitions.
 * `parseDefinition` is the one entry point the HTTP registration handler calls; see
 * docs/workflows.md for the language.
 */

import { type DocumentFormat, parseDocumentText } from "../../common/document-text.ts";
import { DEFINITION_CODE, definitionDecoder } from "./decode.ts";
import type { WorkflowDefinition } from "./types.ts";

export * from "./canonical.ts";
export * from "./decode.ts";
export * from "./expression.ts";
export * from "./expression-limits.ts";
export * from "./types.ts";

/** Parses and decodes a definition document; throws a DecodeError (`invalid_definition`). */
export function parseDefinition(text: string, format: DocumentFormat): WorkflowDefinition {
  return definitionDecoder.run(parseDocumentText(text, format, DEFINITION_CODE), undefined);
}

/** Decodes an already parsed document (a JSON request body's `definition` object). */
export function decodeDefinition(value: unknown): WorkflowDefinition {
  return definitionDecoder.run(value, undefined);
}
