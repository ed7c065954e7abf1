export { SlipwayStore } from "./store.ts";
export type { SlipwayStoreOptions, StoreTtlOptions, StoreGetOperation, StorePutOperation, StoreSearchOperation } from "./store.ts";
export { registerStoreRoutes } from "./routes.ts";
