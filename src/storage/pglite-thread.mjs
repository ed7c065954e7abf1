// @ts-check
// The embedded database's own thread: PGlite (PostgreSQL in WebAssembly) runs here, so
// its CPU time does not stall the server's event loop. pglite.ts is the other end; the
// messages are { id, op, ... } requests and { id, rows | error } answers, plus
// { notify: channel, payload } for SQL-level NOTIFY. Plain JavaScript on purpose: a
// worker thread does not inherit the TypeScript loader of its parent.
import { getHeapSpaceStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { useNativeBytea } from "./pglite-bytea.mjs";
import { DURABLE_START, DurableNodeFS, embeddedFsync } from "./pglite-durable-fs.mjs";
import { NEW_CLUSTER_INITDB, NEW_CLUSTER_START } from "./pglite-compact.mjs";
import { PreparedStatements } from "./pglite-prepared.mjs";
import { serveOnSocket } from "./pglite-sharing.mjs";
import { runUpkeep } from "./pglite-upkeep.mjs";

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);
const { dataDir, schema, upkeepEveryMs, sharedBuffers } = /** @type {{ dataDir: string; schema: string; upkeepEveryMs?: number; sharedBuffers?: string }} */ (
  workerData
);

/** @type {PGlite} */
let pg;
/** @type {PreparedStatements} */
let prepared;
/** Open transactions: PGlite holds its lock until the callback we keep waiting returns. */
const transactions = new Map();
/** Who hears each NOTIFY channel: the parent, and clients of the socket when shared. */
const channels = new Map();
/** The socket server when this database is shared with other processes. */
let sharing;
/** A billion transaction IDs: half way to the point where PostgreSQL refuses writes. */
const WRAPAROUND_WARNING_AGE = 1_000_000_000;
let warnedOfWraparound = false;
/** The upkeep's timer, and the pass under way (close waits for it). */
let upkeepTimer;
let upkeepPass;

/** Delivers a channel's notifications to `deliver` (PGlite LISTENs once per channel); returns the unsubscribe. */
async function subscribe(channel, deliver) {
  let members = channels.get(channel);
  if (!members) {
    members = new Set();
    channels.set(channel, members);
    await pg.listen(channel, (payload) => publish(channel, payload));
  }
  members.add(deliver);
  return () => members.delete(deliver);
}

function publish(channel, payload) {
  for (const deliver of [...(channels.get(channel) ?? [])]) deliver(payload);
}

/**
 * Errors of PGlite's WebAssembly filesystem carry only a WASI errno (no message); these
 * are the ones a data directory meets.
 */
const WASI_ERRNO = {
  2: "EACCES: permission denied",
  20: "EEXIST: file exists",
  31: "EISDIR: is a directory",
  44: "ENOENT: no such file or directory",
  51: "ENOSPC: no space left on device",
  54: "ENOTDIR: not a directory",
  63: "EPERM: operation not permitted",
  69: "EROFS: read-only file system",
};

/** A readable message for anything thrown, never "[object Object]". */
function messageOf(error) {
  const e = /** @type {Record<string, unknown>} */ (error ?? {});
  if (typeof e.message === "string" && e.message) return e.message;
  if (typeof e.errno === "number") {
    const known = WASI_ERRNO[/** @type {keyof typeof WASI_ERRNO} */ (e.errno)];
    return `filesystem error ${known ?? `errno ${e.errno}`}`;
  }
  if (typeof error !== "object" || error === null) return String(error);
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/** Errors cross threads as plain fields: PostgreSQL's code, detail and so on survive. */
function plainError(error) {
  const e = /** @type {Record<string, unknown>} */ (error ?? {});
  return {
    message: messageOf(error),
    name: e.name,
    code: e.code,
    detail: e.detail,
    hint: e.hint,
    constraint: e.constraint,
    table: e.table,
    column: e.column,
    schema: e.schema,
    severity: e.severity,
  };
}

async function open() {
  const inMemory = dataDir === "memory://" || dataDir === "";
  // A cluster in memory is new: made by initdb here, in 1 MB WAL segments (pglite-compact.mjs).
  // PGlite touches all of shared_buffers as it starts: PostgreSQL's 128 MB default is
  // resident for good, in every deployment's database (pglite.ts sets the size).
  const memory = sharedBuffers ? ["-c", `shared_buffers=${sharedBuffers}`] : [];
  // On disk, commits reach the disk before they are answered (pglite-durable-fs.mjs). A
  // new directory was filled from the template before this thread started (pglite-template.ts).
  pg = inMemory
    ? new PGlite({ initDbStartParams: NEW_CLUSTER_INITDB, startParams: [...NEW_CLUSTER_START, ...memory] })
    : embeddedFsync()
      ? new PGlite({ fs: new DurableNodeFS(dataDir), startParams: [...DURABLE_START, ...memory] })
      : new PGlite(dataDir, { startParams: [...PGlite.defaultStartParams, ...memory] });
  await pg.waitReady;
  useNativeBytea(pg);
  prepared = new PreparedStatements(pg);
  await pg.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${schema}, public;`);
  if (upkeepEveryMs && upkeepEveryMs > 0) upkeepTimer = setInterval(upkeep, upkeepEveryMs).unref();
}

/** One pass of vacuuming and analyzing what is due (pglite-upkeep.mjs); its failures are reported, not thrown. */
function upkeep() {
  if (upkeepPass || pg.closed) return;
  upkeepPass = runUpkeep(pg)
    .then(
      ({ done, failed, oldestOther }) => {
        if (done.length > 0) port.postMessage({ upkeep: done });
        if (oldestOther && oldestOther.xidAge > WRAPAROUND_WARNING_AGE && !warnedOfWraparound) {
          warnedOfWraparound = true;
          port.postMessage({
            warning: `the embedded database's ${oldestOther.name} is ${oldestOther.xidAge} transaction IDs old and cannot be vacuumed from here; PostgreSQL stops accepting writes at about 2 billion: move this data to a PostgreSQL server`,
          });
        }
        for (const { sql, error } of failed) port.postMessage({ warning: `embedded database upkeep: ${sql} failed: ${messageOf(error)}` });
      },
      (error) => port.postMessage({ warning: `embedded database upkeep failed: ${messageOf(error)}` }),
    )
    .finally(() => (upkeepPass = undefined));
}

function begin(txId) {
  return new Promise((ready, failed) => {
    pg.transaction(
      (tx) =>
        new Promise((commit, rollback) => {
          transactions.set(txId, { tx, commit, rollback });
          ready(undefined);
        }),
    ).then(
      () => transactions.get(txId)?.done?.(),
      (error) => {
        const open = transactions.get(txId);
        if (open?.done) open.done(error);
        else failed(error);
      },
    );
  });
}

/** Ends a transaction: resolves once PGlite has committed or rolled back. */
function finish(txId, commit) {
  const open = transactions.get(txId);
  if (!open) throw new Error(`no open transaction ${txId}`);
  return new Promise((resolve, reject) => {
    open.done = (error) => {
      transactions.delete(txId);
      // A rollback we asked for surfaces as the error we threw: that is success here.
      if (error && commit) reject(error);
      else resolve(undefined);
    };
    if (commit) open.commit();
    else open.rollback(new Error("rollback"));
  });
}

async function handle(message) {
  switch (message.op) {
    case "open":
      return open();
    case "query": {
      if (message.txId === undefined) return prepared.query(message.sql, message.params);
      const tx = transactions.get(message.txId)?.tx;
      if (!tx) throw new Error(`no open transaction ${message.txId}`);
      return prepared.query(message.sql, message.params, tx);
    }
    case "begin":
      return begin(message.txId);
    case "commit":
      return finish(message.txId, true);
    case "rollback":
      return finish(message.txId, false);
    case "listen":
      await subscribe(message.channel, (payload) => port.postMessage({ notify: message.channel, payload }));
      return undefined;
    case "serve":
      sharing = await serveOnSocket({
        socketPath: message.socketPath,
        schema,
        handle,
        subscribe,
        publish,
        rollback: (txId) => finish(txId, false),
        plainError,
      });
      return undefined;
    case "memory":
      return [threadMemory()];
    case "close":
      clearInterval(upkeepTimer);
      // The socket first: it rolls back what other processes left open, which a pass
      // under way may be waiting for.
      await sharing?.close();
      await upkeepPass;
      if (pg && !pg.closed) await pg.close();
      return undefined;
    default:
      throw new Error(`unknown operation ${message.op}`);
  }
}

/** What this thread holds, by kind (bench/pglite-memory.ts prints it). */
function threadMemory() {
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]));
  return {
    wasmMemory: pg?.mod?.HEAPU8?.buffer.byteLength ?? 0,
    heapNewSpace: spaces.new_space ?? 0,
    heapOther: Object.values(spaces).reduce((sum, size) => sum + size, 0) - (spaces.new_space ?? 0),
    arrayBuffers: process.memoryUsage().arrayBuffers,
  };
}

function answer(message) {
  handle(message).then(
    (rows) => port.postMessage({ id: message.id, rows }),
    (error) => port.postMessage({ id: message.id, error: plainError(error) }),
  );
}

/**
 * Queries outside transactions that reach this thread together (in one wake-up) run as
 * one call and one commit (PreparedStatements.queryMany), and are answered in one
 * message: each statement alone spent more on its commit and the messages than inside
 * PostgreSQL.
 */
let together = [];

function runTogether() {
  const batch = together;
  together = [];
  if (batch.length === 0) return;
  if (batch.length === 1) return answer(batch[0]);
  prepared.queryMany(batch).then(
    (results) =>
      port.postMessage({
        answers: results.map((result, i) =>
          "error" in result ? { id: batch[i].id, error: plainError(result.error) } : { id: batch[i].id, rows: result.rows },
        ),
      }),
    (error) => port.postMessage({ answers: batch.map(({ id }) => ({ id, error: plainError(error) })) }),
  );
}

port.on("message", (message) => {
  for (const one of message.batch ?? [message]) {
    if (one.op === "query" && one.txId === undefined) {
      if (together.length === 0) setImmediate(runTogether);
      together.push(one);
      continue;
    }
    // Queries that came first keep their place: they ask for PGlite's lock first.
    runTogether();
    answer(one);
  }
});
