/**
 * The strict decoding core shared by both services: every config file, environment variable
 * and request body is decoded here, once, into typed values. See docs/decoding.md.
 */

export * from "./collections.ts";
export * from "./decoder.ts";
export * from "./durations.ts";
export * from "./numbers.ts";
export * from "./objects.ts";
export * from "./refusal.ts";
export * from "./sources.ts";
export * from "./strings.ts";
