/**
 * The query sandbox inside the shipped worker: one QuickJS runtime per query, compiled to
 * WebAssembly, with no host capability at all (no require, process, fetch, timers,
 * console, modules). Its bounds are hard, not advisory: the WebAssembly memory it runs in
 * has a fixed `maximum` (sandbox-memory.ts), and an interrupt handler stops it at the
 * query's deadline (the store's kill is the backstop for long native operations, which the
 * handler cannot interrupt). A batch's records arrive as the UTF-8 bytes of one JSON array;
 * the worker transcodes them to QuickJS's binary object format (binary-json.ts), which the
 * sandbox reads into its own objects in one call, about three times faster than its
 * `JSON.parse` reads the text (text the transcoder does not take is still parsed inside, as
 * before); outputs leave as the bytes of one JSON text (the driver, sandbox-driver.ts, makes
 * it). So a batch crosses the WebAssembly boundary a fixed number of times whatever its
 * size, and no host object ever enters the sandbox: only bytes do. Failures are
 * SandboxErrors with the store's codes (sandbox-errors.ts).
 */

import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { BinaryJsonWriter } from "./binary-json.ts";
import { QUERY_OUTPUT_DEPTH } from "./limits.ts";
import { raise, SandboxError, type SandboxLimits, unwrap } from "./sandbox-errors.ts";
import {
  classify,
  currentMemory,
  disposeParts,
  dropModule,
  type Fresh,
  type Memory,
  takeRuntime,
} from "./sandbox-memory.ts";

export class Sandbox {
  readonly #runtime: QuickJSRuntime;
  /** The module broke under this sandbox (a native stack overflow): nothing in it is freed. */
  #broken = false;
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
      const memory = currentMemory();
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
      const refusal = classify(error, owner.memory);
      // A broken module is dropped whole: freeing into it would trip QuickJS's own asserts.
      if (refusal.brokeModule) handles.splice(0);
      else {
        for (const handle of handles.splice(0)) handle.dispose();
        disposeParts(parts);
      }
      if (refusal.code !== "query_code_error" || refusal.brokeModule) dropModule();
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
      const input = readRecords(context, this.#memory, records, this.#limits);
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
      const clean = refusal.code === "query_code_error" || refusal.code === "query_output_limit";
      if (!clean || refusal.brokeModule) dropModule();
      this.#broken = refusal.brokeModule;
      throw refusal;
    }
  }

  dispose(): void {
    if (this.#broken) return;
    try {
      this.#run.dispose();
    } catch {
      // A runtime broken by a trap is dropped with its memory.
    }
    disposeParts({ runtime: this.#runtime, context: this.#context });
  }
}

/**
 * The parts of quickjs-emscripten-core below its public API that moving a batch as bytes
 * needs (its public strings and array buffers go through copies and Emscripten's
 * JavaScript UTF-8 loops): the module's allocator, the FFI functions and the context's
 * handle maker. The version is pinned in package.json; the query tests run every batch
 * through these.
 */
interface ContextInternals {
  readonly ctx: { readonly value: number };
  readonly module: { _malloc(bytes: number): number; _free(pointer: number): void };
  readonly ffi: {
    QTS_NewString(ctx: number, pointer: number): number;
    QTS_GetString(ctx: number, value: number): number;
    QTS_FreeCString(ctx: number, pointer: number): void;
    QTS_NewArrayBuffer(ctx: number, pointer: number, length: number): number;
    QTS_bjson_decode(ctx: number, value: number): number;
    QTS_ResolveException(ctx: number, value: number): number;
    QTS_FreeValuePointer(ctx: number, value: number): void;
  };
  readonly memory: { heapValueHandle(pointer: number): QuickJSHandle };
}

const outOfMemory = () =>
  new SandboxError("query_memory_limit", "the query needed more than query_memory_bytes");

/** One writer per worker: it keeps its buffers between batches. */
const writer = new BinaryJsonWriter();

/**
 * The sandbox's own array of the records whose JSON array is `bytes`, read by QuickJS from
 * their binary form (`JS_ReadObject` with no flags: plain data only) in a buffer of the
 * sandbox's memory, which the array buffer owns and frees; or, when the text is not
 * transcoded, the text itself as a QuickJS string, which the driver parses.
 */
function readRecords(
  context: QuickJSContext,
  memory: Memory,
  bytes: Uint8Array,
  limits: SandboxLimits,
): QuickJSHandle {
  const binary = writer.transcode(bytes);
  if (binary === undefined) return newStringFromBytes(context, memory, bytes);
  const { head, body } = binary;
  const raw = context as unknown as ContextInternals;
  const length = head.length + body.length;
  const pointer = raw.module._malloc(length);
  if (pointer === 0) throw outOfMemory();
  // Read the buffer after the allocation: it may have grown the memory.
  const heap = new Uint8Array(memory.memory.buffer);
  heap.set(head, pointer);
  heap.set(body, pointer + head.length);
  // The array buffer owns the allocation from here (quickjs-emscripten frees it with it).
  const buffer = handleOrRaise(
    context,
    raw.ffi.QTS_NewArrayBuffer(raw.ctx.value, pointer, length),
    limits,
  );
  try {
    const decoded = raw.ffi.QTS_bjson_decode(raw.ctx.value, buffer.value as unknown as number);
    return handleOrRaise(context, decoded, limits);
  } finally {
    buffer.dispose();
  }
}

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

/**
 * The handle of an FFI call's value, or its exception raised as a SandboxError. No query
 * code runs in these calls, so a thrown null is QuickJS out of memory (it throws null when
 * it cannot even allocate the error).
 */
function handleOrRaise(
  context: QuickJSContext,
  pointer: number,
  limits: SandboxLimits,
): QuickJSHandle {
  const raw = context as unknown as ContextInternals;
  const error = raw.ffi.QTS_ResolveException(raw.ctx.value, pointer);
  if (error === 0) return raw.memory.heapValueHandle(pointer);
  raw.ffi.QTS_FreeValuePointer(raw.ctx.value, pointer);
  const thrown = raw.memory.heapValueHandle(error);
  if (context.typeof(thrown) === "object" && context.dump(thrown) === null) {
    thrown.dispose();
    throw outOfMemory();
  }
  return raise(context, thrown, limits);
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
