/**
 * Every bound of the door in one place, each with the reason for its value. The spec fixes
 * the first three (Limits); the rest are the door's own and are documented in docs/door.md.
 */

/** Spec Limits: a browser request's head (request line and headers) is at most this. */
export const DOOR_HEAD_MAX_BYTES = 16_384;

/** Spec Limits: a browser request's body is at most this; a document edit fits easily. */
export const DOOR_BODY_MAX_BYTES = 1_048_576;

/**
 * An over-bound body is read and dropped up to this after its 413 (a connection closed with
 * unread bytes is reset, and the client loses the answer); past it the connection is cut.
 * As the store's MCP endpoint and skein-idp do.
 */
export const DOOR_DISCARD_MAX_BYTES = 16 * 1024 * 1024;

/** Spec Limits: reading a browser request, and writing its answer, take at most 10 s each. */
export const DOOR_BROWSER_IO_MS = 10_000;

/**
 * A pending sign-in (state, PKCE verifier) is forgotten after this: the IdP's login page
 * lives ten minutes (skein-idp's INTERACTION_TTL_SECONDS), so a later callback cannot finish.
 */
export const PENDING_SIGNIN_TTL_MS = 600_000;

/**
 * Signed-in sessions kept at once; past it the oldest is dropped (that browser signs in
 * again). Sessions exist only after a real sign-in, so this bounds memory, not abuse.
 */
export const MAX_SESSIONS = 10_000;
