/**
 * Fixed bounds of the query machinery (the configurable ones are the service file's six
 * query settings). Each is documented in docs/queries.md, "Limits".
 */

/**
 * Records per `batch` message. Large enough that the per-message cost (a pipe write, two
 * crossings of the WebAssembly boundary) is small beside the records' own; small enough
 * that a batch of the bench's 200-byte records is about 100 KB and the page can stop soon
 * after it is full.
 */
export const QUERY_BATCH_RECORDS = 500;

/** Batches sent ahead of the answers, so the worker never waits for the store's reads. */
export const QUERY_BATCHES_IN_FLIGHT = 2;

/**
 * Grace after query_time_ms before the store kills a worker that has not answered: the
 * worker's own interrupt normally answers `query_time_limit` first, but a long native
 * operation (a huge string join) cannot be interrupted.
 */
export const QUERY_KILL_GRACE_MS = 250;

/** How long a starting worker has to say `ready` (the probe included) before it fails. */
export const QUERY_WORKER_START_MS = 10_000;

/**
 * Largest frame the shipped worker accepts from the store: a compile message carries the
 * query's code and args, a batch QUERY_BATCH_RECORDS records of up to the socket's
 * max_frame; 256 MiB is far above both and still bounds a broken writer.
 */
export const WORKER_INPUT_FRAME_BYTES = 256 << 20;

/**
 * Largest frame the store accepts from a worker, beyond the query's memory: outputs are
 * made inside the sandbox, so their JSON text cannot be much larger than
 * query_memory_bytes; this is the allowance for the message around them.
 */
export const WORKER_OUTPUT_FRAME_SLACK_BYTES = 1 << 20;

/** Longest code text `query.run` accepts. */
export const QUERY_CODE_BYTES = 1 << 20;

/**
 * Deepest nesting of arrays and objects in one output (the output itself is level 1, a
 * number level 0). Past a few thousand levels QuickJS's stringify overflows the worker's
 * stack and the store's reply encoder overflows the store's; 256 is twice a stored value's
 * bound (128, the socket's), so a record returned whole, even wrapped by a fast-path
 * expression (at most 64 levels, expression.ts), always fits.
 */
export const QUERY_OUTPUT_DEPTH = 256;

/**
 * QuickJS's own stack limit for a query (its stack is the WebAssembly module's shadow stack,
 * and each of its frames also takes frames of the worker's native stack). Without a limit a
 * deep recursion overflows the native stack first, which breaks the module; at 128 KiB every
 * recursion through calls, getters, proxies, callbacks and JSON.parse stops inside the
 * sandbox as `InternalError: stack overflow` (about 680 frames of a one-line function), and
 * the module serves the next query. Deep nesting in the source text or a deep value handed
 * to JSON.stringify can still reach the native limit: that is a `query_code_error` too, and
 * the module is replaced (sandbox-memory.ts, `classify`).
 */
export const QUERY_STACK_BYTES = 128 * 1024;
