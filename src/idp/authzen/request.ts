/**
 * AuthZEN 1.0 request bodies, decoded strictly with the common decoder: the objects AuthZEN
 * defines (subject, action, resource, the request and the batch request with its `options`)
 * refuse fields AuthZEN does not define, while `properties` and `context`, which AuthZEN
 * leaves open, take any JSON object. Our resource types then read their properties
 * (`targetOf`): a known type missing a property it needs is a 400, an unknown type is simply
 * something no grant covers.
 */

import {
  array,
  type Decoder,
  expectObject,
  object,
  oneOf,
  optional,
  refuse,
  string,
  withDefault,
} from "../../common/decode/index.ts";
import { child, type Path } from "../../common/decode/refusal.ts";
import { MAX_BATCH_EVALUATIONS, MAX_KEY_BYTES, MAX_NAME_BYTES } from "../bounds.ts";

/** AuthZEN leaves these objects open: any JSON object, not inspected. */
const openObject: Decoder<Readonly<Record<string, unknown>>> = {
  expected: "object",
  run: (value, path) => expectObject(value, path),
};

/** Subject ids, types, action names and resource ids: bounded, never empty. */
const text = (maxBytes: number) => string({ minBytes: 1, maxBytes });

const subject = object({
  type: text(MAX_NAME_BYTES),
  id: text(MAX_NAME_BYTES),
  properties: optional(openObject),
});

const action = object({ name: text(MAX_NAME_BYTES), properties: optional(openObject) });

// A record id is D/C/B/K: up to three names and a key.
const resource = object({
  type: text(MAX_NAME_BYTES),
  id: text(MAX_KEY_BYTES + 3 * 129),
  properties: optional(openObject),
});

export type Subject = ReturnType<typeof subject.run>;
export type Action = ReturnType<typeof action.run>;
export type Resource = ReturnType<typeof resource.run>;

export interface Evaluation {
  readonly subject: Subject;
  readonly action: Action;
  readonly resource: Resource;
}

export const evaluationRequest: Decoder<Evaluation> = object({
  subject,
  action,
  resource,
  context: optional(openObject),
});

const partial = object({
  subject: optional(subject),
  action: optional(action),
  resource: optional(resource),
  context: optional(openObject),
});

export const SEMANTICS = ["execute_all", "deny_on_first_deny", "permit_on_first_permit"] as const;
export type Semantic = (typeof SEMANTICS)[number];

const batch = object({
  subject: optional(subject),
  action: optional(action),
  resource: optional(resource),
  context: optional(openObject),
  evaluations: optional(array(partial, { max: MAX_BATCH_EVALUATIONS })),
  options: optional(
    object({ evaluations_semantic: withDefault(oneOf(SEMANTICS), "execute_all" as Semantic) }),
  ),
});

export interface BatchRequest {
  /** Undefined when the body has no (or an empty) `evaluations`: then it is one evaluation. */
  readonly evaluations: readonly Evaluation[] | undefined;
  readonly single: Evaluation | undefined;
  readonly semantic: Semantic;
}

/** The batch body with each evaluation's fields merged over the top-level defaults. */
export const batchRequest: Decoder<BatchRequest> = {
  expected: "AuthZEN evaluations request",
  run(value, path) {
    const body = batch.run(value, path);
    const semantic = body.options?.evaluations_semantic ?? "execute_all";
    if (body.evaluations === undefined || body.evaluations.length === 0) {
      return { evaluations: undefined, single: complete(body, path), semantic };
    }
    const at = child(path, "evaluations");
    const evaluations = body.evaluations.map((item, i) =>
      complete(
        {
          subject: item.subject ?? body.subject,
          action: item.action ?? body.action,
          resource: item.resource ?? body.resource,
        },
        child(at, i),
      ),
    );
    return { evaluations, single: undefined, semantic };
  },
};

function complete(
  fields: { subject?: Subject; action?: Action; resource?: Resource },
  path: Path,
): Evaluation {
  for (const name of ["subject", "action", "resource"] as const) {
    if (fields[name] === undefined) {
      refuse("missing", child(path, name), `missing ${name} (in the evaluation or as a default)`);
    }
  }
  return fields as Evaluation;
}

/** Where in a database a resource is: the decision rule works on this, never on ids. */
export type Target =
  | { readonly level: "database"; readonly database: string }
  | { readonly level: "collection"; readonly database: string; readonly collection: string }
  | {
      readonly level: "branch";
      readonly database: string;
      readonly collection: string;
      readonly branch: string;
    }
  | {
      readonly level: "record";
      readonly database: string;
      readonly collection: string;
      readonly branch: string;
      readonly key: string;
    };

function property(props: Readonly<Record<string, unknown>>, name: string, path: Path): string {
  const value = props[name];
  if (typeof value !== "string") {
    refuse(value === undefined ? "missing" : "type", child(path, name), "expected string");
  }
  return value;
}

/** The target of a resource of one of our types, or undefined for any other type. */
export function targetOf(resourceValue: Resource, path: Path): Target | undefined {
  const type = resourceValue.type;
  if (type === "service.database") return { level: "database", database: resourceValue.id };
  if (type !== "service.collection" && type !== "service.branch" && type !== "service.record") {
    return undefined;
  }
  const at = child(path, "properties");
  if (resourceValue.properties === undefined) {
    refuse("missing", at, `missing required properties of ${type}`);
  }
  const props = resourceValue.properties;
  const database = property(props, "database", at);
  const collection = property(props, "collection", at);
  if (type === "service.collection") return { level: "collection", database, collection };
  const branch = property(props, "branch", at);
  if (type === "service.branch") return { level: "branch", database, collection, branch };
  return { level: "record", database, collection, branch, key: property(props, "key", at) };
}
