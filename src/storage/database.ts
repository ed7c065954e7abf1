/**
 * The one database handle every component talks to. Two implementations share
 * the PostgreSQL dialect: embedded PGlite (in-process, WASM) and a PostgreSQL
 * server through `pg`. Repositories only see this interface.
 */
export interface Queryable {
  /** Runs one statement with positional `$n` parameters and returns its rows. */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

export interface Database extends Queryable {
  readonly kind: "pglite" | "postgres";
  /**
   * Other processes may use this database at the same time (a PostgreSQL server, or an
   * embedded database shared through a host): runs, streams and waiters must then be
   * coordinated through it. False for an embedded database this process owns alone.
   */
  readonly shared: boolean;
  /** The schema every unqualified table name resolves to. */
  readonly schema: string;
  /** Runs `work` inside BEGIN/COMMIT; any throw rolls back. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Subscribes to NOTIFY on `channel`; resolves to an unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Called after the notification connection was lost and is listening again:
   * notifications sent in between are gone, so listeners re-check what they wait for.
   * (The embedded database never loses its connection.)
   */
  onReconnect(handler: () => void): void;
  /** Called when the database is gone for good (a shared embedded database's host stopped). */
  onLost?(handler: (error: Error) => void): void;
  /** A server's connection pool: its bound, connections open, idle, and requests waiting for one. */
  poolStats?(): { max: number; size: number; available: number; waiting: number };
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres://... for a server; otherwise the embedded store in `dataDir`. */
  databaseUrl?: string;
  /** Directory for embedded PGlite; `memory://` keeps it in memory (tests). */
  dataDir?: string;
  /** Where a new embedded database's empty cluster comes from (pglite.ts's dataDirTemplate), asked only when one is made. */
  pgliteTemplate?: () => Promise<string>;
  /** Schema name for this component's tables. */
  schema: string;
  /** Socket of a shared embedded database (see shared-pglite-host.ts) instead of either. */
  storageSocket?: string;
  /** Maximum pool size for a PostgreSQL server. */
  poolSize?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Schema names are interpolated into SQL, so they are checked strictly. */
export function assertSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid schema name ${JSON.stringify(schema)}: use lowercase letters, digits and _`);
  }
  return schema;
}
