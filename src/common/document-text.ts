/**
 * Document text (YAML or JSON) into values for the decoders, without losing integers: JSON
 * goes through the lossless parser, YAML is read with integers as bigints and duplicate keys
 * refused. Used for worker documents and workflow definitions; a syntax error is a refusal
 * of the whole document with the caller's code.
 */

import { parse as parseYaml } from "yaml";
import { parseJson, refuse } from "./decode/index.ts";

export type DocumentFormat = "yaml" | "json";

/** The format a file name implies: `.json` is JSON, anything else YAML. */
export function formatOf(path: string): DocumentFormat {
  return path.toLowerCase().endsWith(".json") ? "json" : "yaml";
}

export function parseDocumentText(text: string, format: DocumentFormat, code: string): unknown {
  if (format === "json") {
    try {
      return parseJson(text);
    } catch (error) {
      return refuse("type", undefined, (error as Error).message, code);
    }
  }
  try {
    // No warnings: the yaml library prints them with a quote of the source, and a document
    // may be a file its reader must not repeat (logs included).
    return parseYaml(text, { intAsBigInt: true, uniqueKeys: true, logLevel: "error" });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return refuse("type", undefined, `not valid YAML: ${reason}`, code);
  }
}
