// The store_vectors statements live in the store repository. This alias serves its last
// importer (store/store.ts); new code imports them from ./repository.ts.
export { replaceVectors, type FieldVector } from "./repository.ts";
