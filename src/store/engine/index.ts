/**
 * The store engine's public face: create and open a store directory, and the `Store`
 * object with its operations. `serve` and the socket server use only this module.
 */

export type { Receipt } from "./commit.ts";
export { createStore, openStore } from "./open.ts";
export {
  ENGINE_DEFAULTS,
  type RetentionOptions,
  type StoreCreateOptions,
  type StoreEngineOptions,
} from "./options.ts";
export type { RecordItem, RecordScan, RecordText } from "./record-scan.ts";
export { Store, SWEEP_STEP_WORK } from "./store.ts";
