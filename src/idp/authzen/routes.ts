/**
 * The AuthZEN 1.0 endpoints: the well-known configuration, `POST /access/v1/evaluation` and
 * the batch `POST /access/v1/evaluations` with its three `evaluations_semantic`s. Each
 * handler authenticates the caller (caller.ts), decodes the body once, checks that every
 * question is one this caller may ask (403 otherwise: the PEP failing, not a decision), and
 * answers with decisions from a Decider whose reads hold while the state is unchanged. A denial
 * is `decision: false`.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { type Decoder, isDecodeError, parseJson } from "../../common/decode/index.ts";
import { child, type Path } from "../../common/decode/refusal.ts";
import { MAX_EVALUATION_BODY_BYTES } from "../bounds.ts";
import type { Caller, CallerAuthenticator } from "../caller.ts";
import { idpError } from "../errors.ts";
import { isJson, readBody, sendJson } from "../http/io.ts";
import type { IdpState } from "../state/state.ts";
import { Decider, DecisionReads, type Question } from "./decide.ts";
import { batchRequest, type Evaluation, evaluationRequest, targetOf } from "./request.ts";

export const EVALUATION_PATH = "/access/v1/evaluation";
export const EVALUATIONS_PATH = "/access/v1/evaluations";
export const AUTHZEN_CONFIGURATION_PATH = "/.well-known/authzen-configuration";

export function authzenConfiguration(issuer: string) {
  return {
    policy_decision_point: issuer,
    access_evaluation_endpoint: `${issuer}${EVALUATION_PATH}`,
    access_evaluations_endpoint: `${issuer}${EVALUATIONS_PATH}`,
  };
}

/** Reads and decodes a JSON body; decode refusals become `invalid_request` (400). */
export async function decodeBody<T>(
  request: IncomingMessage,
  decoder: Decoder<T>,
  maxBytes: number,
): Promise<T> {
  if (!isJson(request)) throw idpError("unsupported_media_type");
  const body = await readBody(request, maxBytes);
  try {
    return decoder.run(parseJson(body.toString("utf8")), undefined);
  } catch (error) {
    if (isDecodeError(error)) throw idpError("invalid_request", error.message);
    throw error;
  }
}

/** Turns an evaluation into a question, refusing what this caller may not ask. */
function question(caller: Caller, evaluation: Evaluation, path: Path): Question {
  let target: Question["target"];
  try {
    target = targetOf(evaluation.resource, child(path, "resource"));
  } catch (error) {
    if (isDecodeError(error)) throw idpError("invalid_request", error.message);
    throw error;
  }
  const { subject } = evaluation;
  if (
    caller.kind === "self" &&
    (subject.type !== caller.subjectType || subject.id !== caller.subject)
  ) {
    throw idpError("subject_not_caller");
  }
  if (target !== undefined && target.database !== caller.database) {
    throw idpError("resource_outside_database");
  }
  return {
    subjectType: subject.type,
    subjectId: subject.id,
    action: evaluation.action.name,
    target,
  };
}

export class AuthzenRoutes {
  readonly #state: IdpState;
  readonly #callers: CallerAuthenticator;
  readonly #reads = new DecisionReads();

  constructor(state: IdpState, callers: CallerAuthenticator) {
    this.#state = state;
    this.#callers = callers;
  }

  async evaluation(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const caller = await this.#callers.authenticate(request);
    const evaluation = await decodeBody(request, evaluationRequest, MAX_EVALUATION_BODY_BYTES);
    const asked = question(caller, evaluation, undefined);
    const decision = new Decider(this.#state, this.#reads).decide(asked);
    sendJson(response, 200, { decision });
  }

  async evaluations(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const caller = await this.#callers.authenticate(request);
    const body = await decodeBody(request, batchRequest, MAX_EVALUATION_BODY_BYTES);
    const decider = new Decider(this.#state, this.#reads);
    if (body.single !== undefined) {
      const asked = question(caller, body.single, undefined);
      sendJson(response, 200, { decision: decider.decide(asked) });
      return;
    }
    const at = child(undefined, "evaluations");
    const questions = (body.evaluations ?? []).map((e, i) => question(caller, e, child(at, i)));
    const stopOn =
      body.semantic === "deny_on_first_deny"
        ? false
        : body.semantic === "permit_on_first_permit"
          ? true
          : undefined;
    const evaluations: { decision: boolean }[] = [];
    for (const asked of questions) {
      const decision = decider.decide(asked);
      evaluations.push({ decision });
      if (decision === stopOn) break;
    }
    sendJson(response, 200, { evaluations });
  }
}
