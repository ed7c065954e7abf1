import type { PGlite } from "@electric-sql/pglite";
export declare const NEW_CLUSTER_INITDB: string[];
export declare const NEW_CLUSTER_START: string[];
export declare function compactNewCluster(pg: PGlite): Promise<void>;
