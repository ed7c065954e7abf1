import { createHash } from "node:crypto";
import pg from "pg";
import { assertSchemaName, type Database, type Queryable } from "./database.ts";
import { parseByteaArrayText } from "./bytea-text.mjs";

// Our connections' own type parsers, so that other users of `pg` in the process (a graph's
// own code) keep the driver's defaults: int8 (count(*), bigserial) as JS numbers, our counts
// staying far below 2^53; bytea[] (checkpoint blobs) through native hex instead of the
// driver's character loop.
type TypeId = Parameters<typeof pg.types.getTypeParser>[0];
const INT8 = 20;
const BYTEA_ARRAY = 1001;
const parseByteaArrayOwn = pg.types.getTypeParser(BYTEA_ARRAY as TypeId, "text");
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (format !== "binary" && oid === INT8) return (value: string) => Number(value);
    if (format !== "binary" && oid === BYTEA_ARRAY) return (value: string) => parseByteaArrayText(value) ?? parseByteaArrayOwn(value);
    return pg.types.getTypeParser(oid as TypeId, format);
  },
} as pg.CustomTypesConfig;

/** A PostgreSQL server through a `pg` pool, every connection pinned to `schema`. */
export async function openPostgres(url: string, schema: string, poolSize = 20): Promise<Database> {
  assertSchemaName(schema);
  const bootstrap = new pg.Client({ connectionString: url });
  // A cut connection fails the statement awaited below; unheard, its "error" would end the process.
  bootstrap.on("error", () => undefined);
  await bootstrap.connect();
  try {
    // A deployment's role owns its schema but may not create schemas: ask first (CREATE
    // SCHEMA IF NOT EXISTS checks the right to create before it looks).
    const found = await bootstrap.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (!found.rowCount) await bootstrap.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  } catch (error) {
    // Two processes creating the same schema at once race on the catalog; the loser can go on.
    if ((error as { code?: string }).code !== "23505") throw error;
  } finally {
    await bootstrap.end();
  }
  // jit=off: the planner misjudges jsonb set-returning functions and JIT-compiles cheap queries for seconds.
  const options = `-c search_path=${schema},public -c jit=off`;
  const pool = new pg.Pool({ connectionString: url, max: poolSize, options, types });
  pool.on("error", () => {
    // An idle client lost its connection; the pool replaces it on next use.
  });

  const listeners = new Map<string, Set<(payload: string) => void>>();
  const reconnectHandlers = new Set<() => void>();
  let listenClient: pg.Client | undefined;
  let closed = false;

  async function ensureListenClient(): Promise<pg.Client> {
    if (listenClient) return listenClient;
    // Named, so an operator (or a test) can tell this schema's notification connection apart.
    const client = new pg.Client({ connectionString: url, options, types, application_name: `slipway-listen:${schema}` });
    // Before connect: a connection cut while it is being made emits "error" too, and an
    // "error" nobody listens to would end the process.
    client.on("error", () => {
      // A connection lost while in use: reconnect and re-subscribe, then the onReconnect
      // handlers re-check what was missed. (One that fails while connecting is retried
      // by whoever awaited it.)
      if (listenClient !== client) return;
      listenClient = undefined;
      if (!closed) setTimeout(() => void resubscribe(), 500).unref();
    });
    await client.connect();
    client.on("notification", (message) => {
      for (const handler of listeners.get(message.channel) ?? []) {
        // A handler that throws (a payload it did not expect) must not take the process down.
        try {
          handler(message.payload ?? "");
        } catch (error) {
          process.emitWarning(`notification handler for ${message.channel} failed: ${(error as Error).message}`);
        }
      }
    });
    listenClient = client;
    return client;
  }

  async function resubscribe(): Promise<void> {
    try {
      const client = await ensureListenClient();
      for (const channel of listeners.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
      for (const handler of reconnectHandlers) handler();
    } catch {
      if (!closed) setTimeout(() => void resubscribe(), 1000).unref();
    }
  }

  return {
    kind: "postgres",
    shared: true,
    schema,
    async query(sql, params) {
      return runPrepared(pool, sql, params);
    },
    async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      // The pool stops listening for a lent client's "error": a connection cut between the
      // transaction's statements (the server restarted, an operator ended the backend) would
      // then end the process. Heard here, the next statement fails instead, and the client
      // is destroyed rather than given back.
      let lost: Error | undefined;
      const onLost = (error: Error) => {
        lost = error;
      };
      client.on("error", onLost);
      try {
        await client.query("BEGIN");
        // Unnamed inside a transaction: a prepared statement failing there (0A000 below)
        // would abort the transaction, and the retry with it.
        const tx: Queryable = {
          query: async (sql, params) => (await client.query(sql, params as unknown[] | undefined)).rows,
        };
        const result = await work(tx);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.off("error", onLost);
        client.release(lost);
      }
    },
    async listen(channel, onPayload) {
      let handlers = listeners.get(channel);
      if (!handlers) {
        handlers = new Set();
        listeners.set(channel, handlers);
        const client = await ensureListenClient();
        await client.query(`LISTEN ${quoteIdent(channel)}`);
      }
      handlers.add(onPayload);
      return async () => {
        handlers!.delete(onPayload);
      };
    },
    async notify(channel, payload) {
      await pool.query("SELECT pg_notify($1, $2)", [channel, payload]);
    },
    onReconnect(handler) {
      reconnectHandlers.add(handler);
    },
    poolStats() {
      return { max: pool.options.max ?? 10, size: pool.totalCount, available: pool.idleCount, waiting: pool.waitingCount };
    },
    async close() {
      closed = true;
      await listenClient?.end().catch(() => undefined);
      await pool.end();
    },
  };
}

/** Statements that are planned queries; anything else (DDL, LISTEN, ...) is sent as it is. */
const PREPARABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;
/** Distinct texts given a name; past it, new texts go unnamed (a statement built with values inline would fill every connection). */
const MAX_NAMED = 500;
const names = new Map<string, string>();

let renamed = 0;
/** Set once the server has lost a prepared statement (see runPrepared): names are off for good. */
let unnamed = false;

/** The name a statement is prepared under on each connection (node-postgres parses it once per connection). */
function statementName(sql: string): string | undefined {
  if (unnamed) return undefined;
  let name = names.get(sql);
  if (name === undefined && names.size < MAX_NAMED && PREPARABLE.test(sql)) {
    name = `slipway_${createHash("sha1").update(sql).digest("hex").slice(0, 20)}`;
    names.set(sql, name);
  }
  return name;
}

/**
 * Runs a statement as a named prepared statement, so the server parses and plans the
 * statements we send over and over once per connection. A statement prepared before its
 * tables changed shape (another process migrated them) fails without running: it is
 * sent unnamed then, and prepared again under a new name the next time. One the server
 * no longer has (26000) turns names off.
 */
async function runPrepared<Row>(target: pg.Pool, sql: string, params: readonly unknown[] | undefined): Promise<Row[]> {
  const name = statementName(sql);
  if (!name) return (await target.query(sql, params as unknown[] | undefined)).rows as Row[];
  try {
    return (await target.query({ name, text: sql, values: params as unknown[] | undefined })).rows as Row[];
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "0A000") {
      // Prepared afresh, under a new name, wherever it is used next.
      names.set(sql, `${name.slice(0, 29)}_${++renamed}`);
    } else if (code === "26000") {
      // The server lost a statement the connection had prepared: a pooler in front of it
      // (PgBouncer in transaction mode) hands each statement to another connection.
      // Everything goes unnamed from now on.
      unnamed = true;
    } else {
      throw error;
    }
    return (await target.query(sql, params as unknown[] | undefined)).rows as Row[];
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
