/**
 * Fixed bounds of the embedding worker and its supervisor. The configurable ones are the
 * service file's embedding group (src/store/config/embed.ts); these are the few the spec
 * leaves to the implementation, each documented in docs/embeddings.md.
 */

/**
 * The `start` message's frame bound on the worker's side, before it knows the store's
 * limits: the message is a few numbers.
 */
export const START_FRAME_BYTES = 4096;

/**
 * Memory the runtime needs per byte of the ONNX file: the weights once as read and once as
 * the session's initialised tensors. An estimate, not yet measured on a real model; the
 * check of resident memory after each batch bounds what it misses.
 */
export const MODEL_MEMORY_FACTOR = 2;

/**
 * Float32 values alive per token per dimension while a batch runs: the hidden state, the
 * attention's working copies and the pooled output. A BERT layer keeps several copies of
 * the hidden state; 16 is a round upper bound for the small encoders this worker targets.
 */
export const ACTIVATION_VALUES_PER_TOKEN_DIM = 16;

/**
 * Resident memory of the worker process besides the model and its activations, as a floor:
 * Node with the tokenizer and the runtime's library measured about 114 MiB resident after
 * loading the 14 KB test model. The start-up check uses the floor, so it refuses only limits
 * that cannot work; the check of resident memory after each batch bounds the rest.
 */
export const PROCESS_BASE_BYTES = 96 * 1024 * 1024;

/**
 * How long the store waits after SIGTERM before SIGKILL when it stops a worker. Workers
 * hold no state worth saving, so this is short.
 */
export const WORKER_STOP_GRACE_MS = 1000;
