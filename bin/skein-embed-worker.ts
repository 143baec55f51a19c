/**
 * The shipped embedding worker's entry (started by bin/skein-embed-worker, which sets
 * Node's permission model). It speaks the worker protocol of docs/embeddings.md on stdin
 * and stdout.
 */
import { runEmbedWorker } from "../src/store/embed/worker-main.ts";

runEmbedWorker();
