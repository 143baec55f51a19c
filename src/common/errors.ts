/**
 * The shared error type. Every refusal that crosses a boundary (an HTTP response, a socket
 * frame, a CLI exit) is a SkeinError: a stable snake_case `code` that callers switch on, a
 * human `message`, and, where the refusal maps onto HTTP, a status. Services declare their
 * catalogues of codes on top of this type; nothing else throws bare `Error`s across a
 * boundary.
 */

export interface ErrorShape {
  readonly code: string;
  readonly message: string;
}

export class SkeinError extends Error implements ErrorShape {
  readonly code: string;
  readonly status: number;

  constructor(code: string, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SkeinError";
    this.code = code;
    this.status = options.status ?? 400;
  }

  toJSON(): ErrorShape {
    return { code: this.code, message: this.message };
  }
}

/** True for any value shaped like a coded error, including a SkeinError from another realm. */
export function isCodedError(value: unknown): value is ErrorShape {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { code?: unknown }).code === "string" &&
    typeof (value as { message?: unknown }).message === "string"
  );
}
