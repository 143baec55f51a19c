/**
 * The query sandbox inside the shipped worker: one QuickJS runtime per query, compiled to
 * WebAssembly, with no host capability at all (no require, process, fetch, timers,
 * console, modules). Its bounds are hard, not advisory: the WebAssembly memory it runs in
 * has a fixed `maximum` (QuickJS's own malloc limit alone let a process grow to 2 GB), and
 * an interrupt handler stops it at the query's deadline (the store's kill is the backstop
 * for long native operations, which the handler cannot interrupt). Records arrive as the
 * UTF-8 bytes of one JSON array per batch, copied straight into the sandbox's memory, and
 * outputs leave as the bytes of one JSON text, so a batch crosses the WebAssembly boundary
 * twice whatever its size, and no host string of it is made. The WebAssembly instance is
 * reused between queries until one hits a limit; a runtime never is, but the next query's
 * is made ahead of it, between queries (`prepareSandbox`).
 */

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import release from "@jitl/quickjs-wasmfile-release-sync";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import { QUERY_OUTPUT_DEPTH } from "./limits.ts";

// The package's types are its CommonJS ones, where the default import is the module
// object; under ESM (how it is loaded) the default export is the variant itself.
const base = release as unknown as QuickJSSyncVariant;

/** The WebAssembly API this module uses (the project's lib has no DOM types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** WebAssembly page size (the unit of a memory's `maximum`). */
const PAGE_BYTES = 65_536;
/**
 * Memory the QuickJS module needs before any query allocates (its static data, stack
 * and the runtime's intrinsics): the Emscripten build's INITIAL_MEMORY, 16 MiB. The
 * memory's maximum is this plus the query's `memory_bytes`.
 */
export const SANDBOX_BASE_BYTES = 16 << 20;
/** Longest error message passed back from the query's own exception (a bound, not a format). */
export const SANDBOX_MESSAGE_BYTES = 1024;

export class SandboxError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** The sandbox's WebAssembly memory and its fixed ceiling in bytes. */
interface Memory {
  readonly memory: WasmMemory;
  readonly maximumBytes: number;
}

export interface SandboxLimits {
  readonly timeMs: number;
  readonly memoryBytes: number;
  readonly outputsPerRecord: number;
}

// Compiled once per worker: every query instantiates it with a memory of its own.
let compiled: object | undefined;
function wasmModule(): object {
  compiled ??= new wasm.Module(
    readFileSync(fileURLToPath(import.meta.resolve("@jitl/quickjs-wasmfile-release-sync/wasm"))),
  );
  return compiled;
}

/**
 * The WebAssembly instance queries run in, reused while it is healthy: instantiating one
 * costs milliseconds, a page of a projection often less. Each query still gets a runtime
 * of its own (its objects are freed with it); the instance is only the memory they live in.
 */
let current: { module: QuickJSWASMModule; memory: Memory; memoryBytes: number } | undefined;

async function moduleFor(memoryBytes: number) {
  if (current !== undefined && current.memoryBytes === memoryBytes) return current;
  const pages = Math.ceil((SANDBOX_BASE_BYTES + memoryBytes) / PAGE_BYTES);
  const memory: Memory = {
    memory: new wasm.Memory({ initial: SANDBOX_BASE_BYTES / PAGE_BYTES, maximum: pages }),
    maximumBytes: pages * PAGE_BYTES,
  };
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(base, {
      wasmModule: wasmModule() as never,
      wasmMemory: memory.memory as never,
    }),
  );
  current = { module, memory, memoryBytes };
  return current;
}

function dropModule(): void {
  current = undefined;
  discardSpare();
}

/** A runtime with the driver evaluated and no query code run in it yet. */
interface Fresh {
  readonly owner: NonNullable<typeof current>;
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  readonly driver: QuickJSHandle;
}

/**
 * The next query's runtime, made between queries: making one (its context's intrinsics,
 * the driver) costs about a millisecond, which a page of a projection would otherwise wait
 * for. It belongs to no query until `Sandbox.create` takes it, and is dropped with its
 * module.
 */
let spare: Fresh | undefined;

async function freshRuntime(memoryBytes: number): Promise<Fresh> {
  const owner = await moduleFor(memoryBytes);
  const runtime = owner.module.newRuntime();
  runtime.setMemoryLimit(memoryBytes);
  const context = runtime.newContext();
  try {
    return {
      owner,
      runtime,
      context,
      driver: unwrap(context, context.evalCode(DRIVER, "driver.js")),
    };
  } catch (error) {
    disposeParts({ runtime, context });
    throw error;
  }
}

/** Makes the next query's runtime now, if the last one's memory size is asked again. */
export async function prepareSandbox(memoryBytes: number): Promise<void> {
  if (spare !== undefined && spare.owner === current && current.memoryBytes === memoryBytes) {
    return;
  }
  discardSpare();
  try {
    spare = await freshRuntime(memoryBytes);
  } catch {
    // The query that comes will make its own and meet whatever failed here.
    dropModule();
  }
}

function discardSpare(): void {
  const fresh = spare;
  spare = undefined;
  if (fresh === undefined) return;
  try {
    fresh.driver.dispose();
  } catch {
    // Dropped with its module's memory.
  }
  disposeParts(fresh);
}

/** The spare runtime if it suits `memoryBytes`, or a new one. */
async function takeRuntime(memoryBytes: number): Promise<Fresh> {
  const fresh = spare;
  spare = undefined;
  if (fresh !== undefined && fresh.owner === current && current.memoryBytes === memoryBytes) {
    return fresh;
  }
  if (fresh !== undefined) {
    spare = fresh;
    discardSpare();
  }
  return freshRuntime(memoryBytes);
}

/**
 * Captures the intrinsics it uses when the runtime is made, before any query code runs (a
 * query's code can run statements while it is compiled: `(Array.prototype.push = null, f)`),
 * and uses no prototype method, so a query that replaces them still has its outputs
 * gathered; whatever else it breaks is its own sandbox's. Throws a marked object when one
 * record has more outputs than allowed, or an output nests deeper than QUERY_OUTPUT_DEPTH.
 *
 * The depth is measured by the replacer of the one `stringify` that serializes the batch,
 * on what is actually serialized (after `toJSON`, getters and proxies), and refused before
 * stringify descends further: QuickJS's stringify recurses on the WebAssembly stack, which
 * is the host's, and its own stack check does not see it, so a deep enough output overflows
 * the worker's stack instead of failing inside the sandbox. A walk before stringify would be
 * neither cheaper nor sound (a getter can answer it shallow and stringify deep). Stringify
 * calls the replacer depth first with each value's holder, so the path is a stack popped
 * back to the holder; it is a null-prototype object, which no query's setter on
 * Array.prototype can reach.
 */
const DRIVER = `(function () {
  "use strict";
  const parse = JSON.parse, stringify = JSON.stringify, isArray = Array.isArray;
  const create = Object.create;
  return function (fn, argsJson, maxOutputs, maxDepth) {
    const args = parse(argsJson);
    // The batch array, a row, then the output: the output's first level is the path's third.
    const deepest = maxDepth + 2;
    return function (recordsJson) {
      const records = parse(recordsJson);
      const rows = [];
      for (let i = 0; i < records.length; i++) {
        const out = fn(records[i], args);
        if (out === undefined) continue;
        if (isArray(out)) {
          if (out.length > maxOutputs) throw { skeinLimit: "output", index: i, count: out.length };
          for (let j = 0; j < out.length; j++) rows[rows.length] = [i, out[j]];
        } else rows[rows.length] = [i, out];
      }
      const path = create(null);
      let top = -1;
      return stringify(rows, function (key, value) {
        if (top < 0) path[top = 0] = this;
        else while (top > 0 && path[top] !== this) top--;
        if (typeof value === "object" && value !== null) {
          if (++top > deepest) throw { skeinLimit: "depth" };
          path[top] = value;
        }
        return value;
      });
    };
  };
})()`;

export class Sandbox {
  readonly #runtime: QuickJSRuntime;
  readonly #context: QuickJSContext;
  readonly #memory: Memory;
  readonly #run: QuickJSHandle;
  readonly #limits: SandboxLimits;

  private constructor(
    parts: { runtime: QuickJSRuntime; context: QuickJSContext; memory: Memory },
    run: QuickJSHandle,
    limits: SandboxLimits,
  ) {
    this.#runtime = parts.runtime;
    this.#context = parts.context;
    this.#memory = parts.memory;
    this.#run = run;
    this.#limits = limits;
  }

  /**
   * A fresh runtime running `code` (a function expression) with `argsJson`; its deadline is
   * `timeMs` after `startedAt` (the query's compile, when the sandbox is made later).
   */
  static async create(
    code: string,
    argsJson: string,
    limits: SandboxLimits,
    startedAt = performance.now(),
  ): Promise<Sandbox> {
    let fresh: Fresh;
    try {
      fresh = await takeRuntime(limits.memoryBytes);
    } catch (error) {
      const memory = current?.memory;
      dropModule();
      throw memory === undefined ? error : classify(error, memory);
    }
    const { runtime, context, driver, owner } = fresh;
    const deadline = startedAt + limits.timeMs;
    runtime.setInterruptHandler(() => performance.now() > deadline);
    const parts = { runtime, context, memory: owner.memory };
    // Every handle is released before the runtime is: QuickJS asserts on leaked objects.
    const handles: QuickJSHandle[] = [driver];
    const keep = (handle: QuickJSHandle) => {
      handles.push(handle);
      return handle;
    };
    try {
      const fn = keep(unwrap(context, context.evalCode(`(${code}\n)`, "query.js")));
      if (context.typeof(fn) !== "function") {
        throw new SandboxError("query_code_error", "code must be a function expression");
      }
      const argsHandle = keep(context.newString(argsJson));
      const max = keep(context.newNumber(limits.outputsPerRecord));
      const depth = keep(context.newNumber(QUERY_OUTPUT_DEPTH));
      const run = unwrap(
        context,
        context.callFunction(driver, context.undefined, fn, argsHandle, max, depth),
      );
      return new Sandbox(parts, run, limits);
    } catch (error) {
      for (const handle of handles.splice(0)) handle.dispose();
      disposeParts(parts);
      const refusal = classify(error, owner.memory);
      if (refusal.code !== "query_code_error") dropModule();
      throw refusal;
    } finally {
      for (const handle of handles) handle.dispose();
    }
  }

  /**
   * The rows of one batch as the UTF-8 bytes of a JSON array of `[index, output]`, from
   * the bytes of a JSON array of `{key, value}` records.
   */
  runBatch(records: Uint8Array): Uint8Array {
    const context = this.#context;
    try {
      const input = newStringFromBytes(context, this.#memory, records);
      const result = context.callFunction(this.#run, context.undefined, input);
      input.dispose();
      const out = unwrap(context, result, this.#limits);
      try {
        if (context.typeof(out) !== "string") {
          throw new SandboxError("query_code_error", "the driver was replaced");
        }
        return stringBytes(context, this.#memory, out);
      } finally {
        out.dispose();
      }
    } catch (error) {
      const refusal = classify(error, this.#memory);
      // After a limit or a trap the module's heap may be fragmented or broken: the next
      // query gets a new one. A query that merely threw leaves it as it found it.
      if (refusal.code !== "query_code_error" && refusal.code !== "query_output_limit") {
        dropModule();
      }
      throw refusal;
    }
  }

  dispose(): void {
    try {
      this.#run.dispose();
    } catch {
      // A runtime broken by a trap is dropped with its memory.
    }
    disposeParts({ runtime: this.#runtime, context: this.#context });
  }
}

function disposeParts(parts: { runtime: QuickJSRuntime; context: QuickJSContext }): void {
  try {
    parts.context.dispose();
    parts.runtime.dispose();
  } catch {
    // Same: after a trap the module is unusable and is garbage with its memory.
  }
}

/**
 * The parts of quickjs-emscripten-core below its public API that moving a batch as bytes
 * needs (its public strings go through Emscripten's JavaScript UTF-8 loops, which cost
 * more than QuickJS's parse of the records): the module's allocator, three FFI functions
 * and the context's handle maker. The version is pinned in package.json; the query tests
 * run every batch through these.
 */
interface ContextInternals {
  readonly ctx: { readonly value: number };
  readonly module: { _malloc(bytes: number): number; _free(pointer: number): void };
  readonly ffi: {
    QTS_NewString(ctx: number, pointer: number): number;
    QTS_GetString(ctx: number, value: number): number;
    QTS_FreeCString(ctx: number, pointer: number): void;
  };
  readonly memory: { heapValueHandle(pointer: number): QuickJSHandle };
}

const outOfMemory = () =>
  new SandboxError("query_memory_limit", "the query needed more than query_memory_bytes");

/** A QuickJS string of UTF-8 `bytes` (JSON text: it holds no NUL byte). */
function newStringFromBytes(
  context: QuickJSContext,
  memory: Memory,
  bytes: Uint8Array,
): QuickJSHandle {
  const raw = context as unknown as ContextInternals;
  const pointer = raw.module._malloc(bytes.length + 1);
  if (pointer === 0) throw outOfMemory();
  try {
    // Read the buffer after the allocation: it may have grown the memory.
    const heap = new Uint8Array(memory.memory.buffer);
    heap.set(bytes, pointer);
    heap[pointer + bytes.length] = 0;
    return raw.memory.heapValueHandle(raw.ffi.QTS_NewString(raw.ctx.value, pointer));
  } finally {
    raw.module._free(pointer);
  }
}

/** The UTF-8 bytes of a QuickJS string, copied out of the sandbox's memory. */
function stringBytes(context: QuickJSContext, memory: Memory, value: QuickJSHandle): Uint8Array {
  const raw = context as unknown as ContextInternals;
  const pointer = raw.ffi.QTS_GetString(raw.ctx.value, value.value as unknown as number);
  if (pointer === 0) throw outOfMemory();
  try {
    const heap = new Uint8Array(memory.memory.buffer);
    return Buffer.from(heap.subarray(pointer, heap.indexOf(0, pointer)));
  } finally {
    raw.ffi.QTS_FreeCString(raw.ctx.value, pointer);
  }
}

type CallResult = ReturnType<QuickJSContext["evalCode"]>;

/** The value of a call, or a SandboxError naming the limit or the query's own failure. */
function unwrap(
  context: QuickJSContext,
  result: CallResult,
  limits?: SandboxLimits,
): QuickJSHandle {
  if (!("error" in result) || result.error === undefined) return result.value;
  const error = result.error;
  let dumped: unknown;
  try {
    dumped = context.dump(error);
  } finally {
    error.dispose();
  }
  throw fromQuickJS(dumped, limits);
}

function fromQuickJS(dumped: unknown, limits?: SandboxLimits): SandboxError {
  const value = (typeof dumped === "object" && dumped !== null ? dumped : {}) as Record<
    string,
    unknown
  >;
  if (value.skeinLimit === "output") {
    const max = limits?.outputsPerRecord;
    return new SandboxError(
      "query_output_limit",
      `a record gave ${String(value.count)} outputs; query_outputs_per_record is ${max}`,
    );
  }
  if (value.skeinLimit === "depth") {
    return new SandboxError(
      "query_output_limit",
      `an output nests deeper than ${QUERY_OUTPUT_DEPTH} levels of arrays and objects`,
    );
  }
  if (value.name === "InternalError" && value.message === "interrupted") {
    return new SandboxError("query_time_limit", "the query ran past query_time_ms");
  }
  if (value.name === "InternalError" && value.message === "out of memory") {
    return new SandboxError("query_memory_limit", "the query needed more than query_memory_bytes");
  }
  const text =
    typeof value.name === "string" ? `${value.name}: ${String(value.message)}` : String(dumped);
  return new SandboxError("query_code_error", text.slice(0, SANDBOX_MESSAGE_BYTES));
}

/** A trap of the WebAssembly module at its memory ceiling is the memory limit. */
function classify(error: unknown, memory: Memory): SandboxError {
  if (error instanceof SandboxError) return error;
  const full = memory.memory.buffer.byteLength + 4 * PAGE_BYTES >= memory.maximumBytes;
  if (full || (error instanceof Error && /memory/i.test(error.message))) {
    return new SandboxError("query_memory_limit", "the query needed more than query_memory_bytes");
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SandboxError("query_worker_failed", message.slice(0, SANDBOX_MESSAGE_BYTES));
}
