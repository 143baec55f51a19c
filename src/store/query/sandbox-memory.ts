/**
 * The WebAssembly side of the query sandbox: the QuickJS module compiled once per worker,
 * the memory each instance runs in (a fixed `maximum`: QuickJS's own malloc limit alone let
 * a process grow to 2 GB), the instance reused between queries while it is healthy, and the
 * next query's runtime made ahead of it (`prepareSandbox`). A trap at the memory's ceiling
 * is the memory limit (`classify`).
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
import { QUERY_STACK_BYTES } from "./limits.ts";
import { DRIVER } from "./sandbox-driver.ts";
import { SANDBOX_MESSAGE_BYTES, SandboxError, unwrap } from "./sandbox-errors.ts";

// The package's types are its CommonJS ones, where the default import is the module
// object; under ESM (how it is loaded) the default export is the variant itself.
const base = release as unknown as QuickJSSyncVariant;

/** The WebAssembly API this module uses (the project's lib has no DOM types). */
export interface WasmMemory {
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
/** The sandbox's WebAssembly memory and its fixed ceiling in bytes. */
export interface Memory {
  readonly memory: WasmMemory;
  readonly maximumBytes: number;
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

export function dropModule(): void {
  current = undefined;
  discardSpare();
}

/** A runtime with the driver evaluated and no query code run in it yet. */
export interface Fresh {
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
  runtime.setMaxStackSize(QUERY_STACK_BYTES);
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
export async function takeRuntime(memoryBytes: number): Promise<Fresh> {
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

/** The memory of the instance queries run in now, if there is one. */
export function currentMemory(): Memory | undefined {
  return current?.memory;
}

export function disposeParts(parts: { runtime: QuickJSRuntime; context: QuickJSContext }): void {
  try {
    parts.context.dispose();
    parts.runtime.dispose();
  } catch {
    // Same: after a trap the module is unusable and is garbage with its memory.
  }
}

/** A trap of the WebAssembly module at its memory ceiling is the memory limit. */
export function classify(error: unknown, memory: Memory): SandboxError {
  if (error instanceof SandboxError) return error;
  // The worker's native stack overflowed under the module's frames: the query's own doing
  // (limits.ts, QUERY_STACK_BYTES), but the module's shadow stack was never unwound.
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return new SandboxError(
      "query_code_error",
      "the query nested too deeply for the sandbox's stack (a recursion, or deeply nested code or values)",
      true,
    );
  }
  const full = memory.memory.buffer.byteLength + 4 * PAGE_BYTES >= memory.maximumBytes;
  if (full || (error instanceof Error && /memory/i.test(error.message))) {
    return new SandboxError("query_memory_limit", "the query needed more than query_memory_bytes");
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SandboxError("query_worker_failed", message.slice(0, SANDBOX_MESSAGE_BYTES));
}
