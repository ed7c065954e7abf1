import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { DataDirError, prepareDataDir } from "./data-dir.ts";
import { CLUSTER_MARKER, unpackTemplate } from "./pglite-template.ts";
import { assertSchemaName, type Database, type Queryable } from "./database.ts";
import type { UpkeepStep } from "./pglite-upkeep.mjs";
import { databasesPerThread, placeDatabase, type ThreadReply } from "./pglite-threads.ts";

const runFile = promisify(execFile);

type Answer = { id: number; rows?: unknown[]; error?: Record<string, unknown> };
type Reply = Answer | { answers: Answer[] } | { notify: string; payload: string } | { upkeep: UpkeepDone[] } | { warning: string };

/**
 * What an embedded database's thread holds (bench/pglite-memory.ts): the size of
 * PostgreSQL's WebAssembly memory (reserved; the pages it touched are resident), the
 * thread's JavaScript heap (young generation apart), and its ArrayBuffers outside the
 * WebAssembly memory.
 */
export type ThreadMemory = { wasmMemory: number; heapNewSpace: number; heapOther: number; arrayBuffers: number };

/** The embedded database, and what its thread holds. */
export type PgliteDatabase = Database & { threadMemory(): Promise<ThreadMemory> };

/** One statement of the embedded database's upkeep, with why it was due and how long it held the database. */
export type UpkeepDone = UpkeepStep & { ms: number };

/** How often the embedded database checks what needs vacuuming: autovacuum's default naptime. */
const UPKEEP_EVERY_MS = 60_000;
/**
 * The embedded database's buffer cache. PGlite makes all of it resident at start, so
 * PostgreSQL's 128 MB default cost that much in every process and in the control plane
 * once per deployment; the files under it stay in the kernel's page cache anyway, so a
 * buffer missed is a read from memory, not from the disk. 8 MB measured as fast as 16 on
 * `bench:agent` and about 5 MB less per deployment (decision 0046's addendum).
 */
const DEFAULT_SHARED_BUFFERS = "8MB";

/** SLIPWAY_PGLITE_SHARED_BUFFERS, in PostgreSQL's units; anything else is refused by name. */
export function sharedBuffersSetting(env: NodeJS.ProcessEnv = process.env): string {
  const value = env.SLIPWAY_PGLITE_SHARED_BUFFERS?.trim() || DEFAULT_SHARED_BUFFERS;
  const size = /^([0-9]{1,7})(kB|MB|GB)$/.exec(value);
  const kB = size ? Number(size[1]) * { kB: 1, MB: 1024, GB: 1024 * 1024 }[size[2] as "kB" | "MB" | "GB"] : NaN;
  // PostgreSQL's floor, and WebAssembly's 4 GB of memory in all for the database.
  if (!(kB >= 128 && kB <= 1024 * 1024)) {
    throw new Error(
      `SLIPWAY_PGLITE_SHARED_BUFFERS must be a size from 128kB to 1GB, such as 16MB (units kB, MB, GB), not ${JSON.stringify(value.slice(0, 40))}`,
    );
  }
  return value;
}
/**
 * A pass that held the database longer than this is worth a warning: statements waited
 * for it. After one, only a pass twice as long as the longest warned of warns again, so a
 * busy server says it a few times, not every minute.
 */
const UPKEEP_NOTABLE_MS = 1_000;

/**
 * Embedded PostgreSQL (PGlite) on a database thread (pglite-thread.mjs), so that
 * the database's CPU time runs beside the server's event loop instead of inside it.
 * PGlite runs one connection and serialises statements itself: while a transaction
 * is open, other statements wait for it, as on the calling thread before.
 *
 * Creating a cluster runs initdb inside WASM, which takes seconds. When a template names
 * a data-directory tarball (`writePgliteTemplate`; default SLIPWAY_PGLITE_TEMPLATE), a
 * new data directory is unpacked from it instead; an existing one is never touched.
 *
 * With `shareOn`, the thread also serves the database to other processes on that local
 * socket (pglite-sharing.mjs; see shared-pglite-host.ts).
 *
 * With `shareThread`, the database may share its thread with others opened so (a
 * deployment's, decision 0057: pglite-threads.ts); otherwise it has a thread of its own.
 *
 * Every `upkeepEveryMs` (0: never) the thread vacuums and analyzes the tables that
 * autovacuum's rules say are due, as a PostgreSQL server would in the background
 * (pglite-upkeep.mjs, decision 0026); `onUpkeep` hears what each pass did.
 */
export async function openPglite(
  dataDir: string,
  schema: string,
  options: {
    template?: string | (() => Promise<string>);
    shareOn?: string;
    shareThread?: boolean;
    upkeepEveryMs?: number;
    onUpkeep?: (done: UpkeepDone[]) => void;
  } = {},
): Promise<PgliteDatabase> {
  assertSchemaName(schema);
  const inMemory = dataDir === "memory://" || dataDir === "";
  if (!inMemory) prepareDataDir(dataDir);
  if (!inMemory && !existsSync(join(dataDir, CLUSTER_MARKER))) {
    const template = typeof options.template === "function" ? await options.template() : options.template;
    await unpackEmptyCluster(dataDir, template ?? process.env.SLIPWAY_PGLITE_TEMPLATE);
  }
  const config = { dataDir, schema, upkeepEveryMs: options.upkeepEveryMs ?? UPKEEP_EVERY_MS, sharedBuffers: sharedBuffersSetting() };
  // Read at every open, so a wrong setting stops `slipway up` as its own database opens.
  const perThread = databasesPerThread();
  const pending = new Map<number, { resolve: (rows: unknown[]) => void; reject: (error: Error) => void }>();
  const sqlListeners = new Map<string, Set<(payload: string) => void>>();
  const localListeners = new Map<string, Set<(payload: string) => void>>();
  let nextId = 1;
  let exited: Error | undefined;

  const settle = (answer: Answer) => {
    const waiter = pending.get(answer.id);
    pending.delete(answer.id);
    if (!waiter) return;
    if (answer.error) waiter.reject(Object.assign(new Error(String(answer.error.message)), answer.error));
    else waiter.resolve(answer.rows ?? []);
  };
  const hear = (reply: Reply) => {
    if ("notify" in reply) {
      for (const listener of [...(sqlListeners.get(reply.notify) ?? [])]) listener(reply.payload);
    } else if ("answers" in reply) {
      for (const answer of reply.answers) settle(answer);
    } else if ("upkeep" in reply) {
      heardUpkeep(reply.upkeep);
    } else if ("warning" in reply) {
      process.emitWarning(reply.warning);
    } else {
      settle(reply);
    }
  };
  let upkeepWarnedMs = UPKEEP_NOTABLE_MS / 2;
  const heardUpkeep = (done: UpkeepDone[]) => {
    options.onUpkeep?.(done);
    const ms = done.reduce((sum, step) => sum + step.ms, 0);
    if (ms > 2 * upkeepWarnedMs) {
      upkeepWarnedMs = ms;
      const what = done.map((step) => `${step.table} (${step.why}, ${Math.round(step.ms)} ms)`).join(", ");
      process.emitWarning(`the embedded database's upkeep held statements for ${Math.round(ms)} ms: ${what}. A PostgreSQL server does this in the background.`);
    }
  };
  const fail = (error: Error) => {
    exited = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  const { thread, db } = placeDatabase({ hear: (reply: ThreadReply) => hear(reply as unknown as Reply), ended: fail }, options.shareThread ? perThread : 1);

  // Requests made before the next microtask (one callback's worth) travel in one message.
  let outbox: Array<Record<string, unknown>> = [];
  const flush = () => {
    const batch = outbox;
    outbox = [];
    try {
      thread.post(batch.length === 1 ? batch[0] : { batch });
    } catch {
      // A request that cannot cross to the thread (a function among its parameters)
      // fails alone, as it did when each went on its own: the others still go.
      for (const one of batch) {
        try {
          thread.post(one);
        } catch (error) {
          pending.get(one.id as number)?.reject(error as Error);
          pending.delete(one.id as number);
        }
      }
    }
  };
  const call = (message: Record<string, unknown>): Promise<unknown[]> => {
    if (exited) return Promise.reject(exited);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      if (outbox.length === 0) queueMicrotask(flush);
      outbox.push({ ...message, id, db });
    });
  };
  const query = <Row>(sql: string, params?: readonly unknown[], txId?: number) => call({ op: "query", sql, params: params ?? [], txId }) as Promise<Row[]>;

  try {
    await call({ op: "open", config });
  } catch (error) {
    await call({ op: "close" }).catch(() => undefined);
    await thread.leave(db);
    throw new DataDirError(`cannot open the embedded database in ${inMemory ? "memory" : dataDir}: ${(error as Error).message}`);
  }
  if (options.shareOn) {
    try {
      await call({ op: "serve", socketPath: options.shareOn });
    } catch (error) {
      await call({ op: "close" }).catch(() => undefined);
      await thread.leave(db);
      throw error;
    }
  }

  let nextTx = 1;
  let closed = false;
  return {
    kind: "pglite",
    shared: options.shareOn !== undefined,
    schema,
    query: (sql, params) => query(sql, params),
    async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      const txId = nextTx++;
      await call({ op: "begin", txId });
      let result: T;
      try {
        result = await work({ query: (sql, params) => query(sql, params, txId) });
      } catch (error) {
        await call({ op: "rollback", txId }).catch(() => undefined);
        throw error;
      }
      await call({ op: "commit", txId });
      return result;
    },
    async listen(channel, onPayload) {
      // SQL-level NOTIFY (sent inside transactions, delivered on commit) comes from
      // the database thread; notify() below is delivered in-process.
      let sql = sqlListeners.get(channel);
      if (!sql) {
        sql = new Set();
        sqlListeners.set(channel, sql);
        await call({ op: "listen", channel });
      }
      sql.add(onPayload);
      const local = localListeners.get(channel) ?? new Set();
      localListeners.set(channel, local);
      local.add(onPayload);
      return async () => {
        sql!.delete(onPayload);
        local.delete(onPayload);
      };
    },
    async notify(channel, payload) {
      // One process owns a PGlite directory, so every listener is in this process:
      // hand the payload over directly instead of a round trip through the database.
      // Asynchronously, like a real NOTIFY, so listeners never run inside the caller.
      const set = localListeners.get(channel);
      if (!set?.size) return;
      setImmediate(() => {
        for (const listener of [...set]) listener(payload);
      });
    },
    onReconnect() {
      // One in-process connection: nothing is ever missed.
    },
    async threadMemory() {
      const [memory] = await call({ op: "memory" });
      return memory as ThreadMemory;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (!exited) await call({ op: "close" }).catch(() => undefined);
      await thread.leave(db);
      // What was sent after the close is no longer heard: it fails, as on a stopped thread.
      fail(new Error("the embedded database is closed"));
    },
  };
}

/**
 * Fills a new data directory with an empty cluster: the template's (see unpackTemplate),
 * or, without one, a cluster made small by a process of its own and unpacked the same way.
 */
async function unpackEmptyCluster(dataDir: string, template: string | undefined): Promise<void> {
  const made = template && existsSync(template) ? undefined : join(tmpdir(), `slipway-new-cluster-${process.pid}-${randomUUID()}.tar`);
  try {
    if (made) await writePgliteTemplate(made);
    await unpackTemplate(made ?? template!, dataDir);
  } catch (error) {
    throw new DataDirError(`cannot create the embedded database in ${dataDir}: ${(error as Error).message}`);
  } finally {
    if (made) rmSync(made, { force: true });
  }
}

const dataDirTemplates = new Map<string, Promise<string>>();

/**
 * The empty cluster of a data directory (`<dataDir>/cache/pglite-cluster-2.tar`), written
 * once and unpacked into every new embedded database there, the control plane's own and
 * each deployment's, instead of running initdb (seconds of WebAssembly) for each.
 * SLIPWAY_PGLITE_TEMPLATE, when it names a file, serves instead.
 */
export function dataDirTemplate(dataDir: string): Promise<string> {
  const given = process.env.SLIPWAY_PGLITE_TEMPLATE;
  if (given && existsSync(given)) return Promise.resolve(given);
  let template = dataDirTemplates.get(dataDir);
  if (!template) {
    template = (async () => {
      // "-2": clusters compacted as decision 0046 says; the first template (39 MB) goes.
      rmSync(join(dataDir, "cache", "pglite-cluster.tar"), { force: true });
      const file = join(dataDir, "cache", "pglite-cluster-2.tar");
      if (existsSync(file)) return file;
      mkdirSync(join(dataDir, "cache"), { recursive: true });
      const partial = `${file}.${process.pid}.${randomUUID()}.partial`;
      try {
        await writePgliteTemplate(partial);
        renameSync(partial, file);
      } finally {
        rmSync(partial, { force: true });
      }
      return file;
    })();
    const writing = template;
    dataDirTemplates.set(dataDir, writing);
    writing.catch(() => dataDirTemplates.get(dataDir) === writing && dataDirTemplates.delete(dataDir));
  }
  const known = template;
  // Someone removed the file since (a cleaned cache): it is written again.
  return known.then((file) => {
    if (existsSync(file)) return file;
    if (dataDirTemplates.get(dataDir) === known) dataDirTemplates.delete(dataDir);
    return dataDirTemplate(dataDir);
  });
}

/**
 * Writes a fresh, empty cluster as a tarball usable as a template (SLIPWAY_PGLITE_TEMPLATE),
 * compacted first (pglite-compact.mjs: about 10 MB on disk instead of 39). initdb runs in a
 * short-lived process (pglite-template-writer.mjs): its seconds of WebAssembly do not
 * stall the caller, and the memory it leaves behind (about 60 MB that a thread of this
 * process kept after it ended) goes with that process.
 */
export async function writePgliteTemplate(path: string): Promise<void> {
  const writer = fileURLToPath(new URL("./pglite-template-writer.mjs", import.meta.url));
  try {
    await runFile(process.execPath, [writer, path], { maxBuffer: 1024 * 1024 });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    const said = stderr?.trim().split("\n").slice(-3).join(" ") || message;
    throw new Error(`writing an empty embedded cluster failed: ${said}`);
  }
}
