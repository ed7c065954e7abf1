// Types of pglite-prepared.mjs (plain JavaScript: it runs on the embedded database's thread).
import type { PGlite, Transaction } from "@electric-sql/pglite";

export interface Prepared {
  name: string;
  paramTypes: number[];
  fields: Array<{ name: string; dataTypeID: number }>;
}

export type Answer = { rows: unknown[] } | { error: unknown };

export class PreparedStatements {
  constructor(pg: PGlite, limit?: number);
  /** Prepared statements by their text; null: not preparable. */
  readonly bySql: Map<string, Prepared | null>;
  query(sql: string, params?: unknown[], tx?: Transaction): Promise<Record<string, unknown>[]>;
  queryMany(items: Array<{ sql: string; params?: unknown[] }>): Promise<Answer[]>;
  forget(sql: string, prepared: Prepared): void;
}
