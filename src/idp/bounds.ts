/**
 * Every bound of the development identity provider, in one place so docs/identity.md can list
 * them and tests can reach them. Each says why it has the value it has.
 */

/** Evaluations in one batch request: the store asks one batch per page of at most 1,000
 * records (its page maximum), and AuthZEN leaves the ceiling to the PDP. More: HTTP 400. */
export const MAX_BATCH_EVALUATIONS = 1000;

/** Body of an evaluation or batch request: 1,000 evaluations carrying a 1 KiB key each plus
 * their names fit in ~1.5 MiB; 4 MiB leaves room for `context` and `properties` without
 * letting one request hold unbounded memory. */
export const MAX_EVALUATION_BODY_BYTES = 4 * 1024 * 1024;

/** A body over its endpoint's bound is read to its end and dropped (so the client can read
 * the 413) up to this many bytes; beyond it the connection is closed. */
export const MAX_DISCARD_BYTES = 16 * 1024 * 1024;

/** Body of the login form: a name and a password, with room to spare. */
export const MAX_LOGIN_BODY_BYTES = 16 * 1024;

/** Body of a placement request: placements carry everything in the path; a body is ignored,
 * but never read beyond this. */
export const MAX_PLACEMENT_BODY_BYTES = 1024;

/** Failed sign-ins per user name per minute before the login page answers 429: slows
 * password guessing on a development IdP without a lock-out that outlives a minute. */
export const LOGIN_FAILURES_PER_MINUTE = 10;

/** User names tracked by the sign-in throttle; the oldest window is forgotten beyond this,
 * so a flood of invented names cannot grow memory. */
export const LOGIN_THROTTLE_NAMES = 10_000;

/** Failed sign-ins per network source (an IPv4 address, an IPv6 /64) per minute, over all
 * names, before the login page answers 429: one password tried across many names is slowed
 * to this many names a minute, while a person mistyping never comes near it. Behind a proxy
 * every caller shares the proxy's source, and this becomes the IdP's whole budget. */
export const LOGIN_FAILURES_PER_SOURCE_PER_MINUTE = 30;

/** Sources tracked by the sign-in throttle; the oldest window is forgotten beyond this. */
export const LOGIN_THROTTLE_SOURCES = 10_000;

/** A password or client secret file: one line; longer is a mistake (a wrong file). */
export const MAX_SECRET_FILE_BYTES = 4096;

/** Shortest password the CLI accepts: a development IdP still should not take "a". */
export const MIN_PASSWORD_BYTES = 8;

/** Subject ids, user, client and group names: generous for e-mail-like names. */
export const MAX_NAME_BYTES = 255;

/** Store names (database, collection, branch) follow the store's own limit. */
export const MAX_STORE_NAME_BYTES = 128;

/** Record keys and key prefixes follow the store's key limit. */
export const MAX_KEY_BYTES = 1024;

/** Access token lifetime: one hour, oidc-provider's default; the store caches its app token
 * until shortly before `exp`. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;

/** A login page interaction (and its cookie) lives ten minutes: enough to type a password. */
export const INTERACTION_TTL_SECONDS = 600;

/** Verified bearer tokens remembered (until their `exp`) so that a store asking many
 * evaluations with the same token does not verify the signature each time. */
export const VERIFIED_TOKEN_CACHE = 1024;

/** HTTP allowances against slow clients: headers within 10 s, a whole request within 30 s. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** Idle keep-alive connections are closed after a minute: the store keeps its connections
 * warm between acts, and one minute covers a pause without holding sockets forever. */
export const KEEP_ALIVE_TIMEOUT_MS = 60_000;
