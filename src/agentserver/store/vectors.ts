// The store_vectors statements live in the store repository. This alias serves the importers
// not yet pointed there (store/store.ts, store/from-config.ts); new code imports them from
// ./repository.ts.
export { detectVectorSupport, replaceVectors, type FieldVector } from "./repository.ts";
