/**
 * The shipped query worker's entry (started by bin/skein-query-worker, which sets Node's
 * permission model). It speaks the worker protocol of docs/queries.md on stdin and stdout.
 */
import { runQueryWorker } from "../src/store/query/worker-main.ts";

runQueryWorker();
