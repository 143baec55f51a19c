/**
 * The engine's decision core: history events, the run state folded from them, and the pure
 * `decide` that turns state into commands. The server wires it to persistence (one
 * transaction per tick for every run that advanced) and to the matcher.
 */

export * from "./commands.ts";
export * from "./decide.ts";
export * from "./dispatcher.ts";
export * from "./engine.ts";
export * from "./history.ts";
export * from "./state.ts";
export * from "./store.ts";
export * from "./timers.ts";
