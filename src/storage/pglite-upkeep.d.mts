// Types of pglite-upkeep.mjs (plain JavaScript: it runs on the database's worker thread).

export interface TableStats {
  name: string;
  dead: number;
  inserted: number;
  modified: number;
  tuples: number;
  xid_age: number;
  pages: number;
  frozen_pages: number;
  toast: boolean;
}

export interface UpkeepStep {
  sql: string;
  table: string;
  why: string;
}

export function planUpkeep(tables: TableStats[], settingRows: Array<{ name: string; value: number }>): UpkeepStep[];
export function runUpkeep(pg: { query: (sql: string) => Promise<{ rows: unknown[] }>; exec: (sql: string) => Promise<unknown> }): Promise<{
  done: Array<UpkeepStep & { ms: number }>;
  failed: Array<UpkeepStep & { error: unknown }>;
  oldestOther: { name: string; xidAge: number } | undefined;
}>;
