// @ts-check
// The embedded database's own thread: PGlite (PostgreSQL in WebAssembly) runs here, so
// its CPU time does not stall the server's event loop. pglite.ts is the other end; the
// messages are { id, op, ... } requests and { id, rows | error } answers, plus
// { notify: channel, payload } for SQL-level NOTIFY. Plain JavaScript on purpose: a
// worker thread does not inherit the TypeScript loader of its parent.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);
const { dataDir, schema, template } = /** @type {{ dataDir: string; schema: string; template?: string }} */ (workerData);

/** @type {PGlite} */
let pg;
/** Open transactions: PGlite holds its lock until the callback we keep waiting returns. */
const transactions = new Map();

/** A fresh directory starts from the template tarball instead of running initdb. */
function templateFor(dir) {
  if (!template || existsSync(join(dir, "PG_VERSION")) || !existsSync(template)) return {};
  return { loadDataDir: new Blob([readFileSync(template)]) };
}

/** Errors cross threads as plain fields: PostgreSQL's code, detail and so on survive. */
function plainError(error) {
  const e = /** @type {Record<string, unknown>} */ (error ?? {});
  return {
    message: String(e.message ?? error),
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
  pg = inMemory ? new PGlite() : new PGlite(dataDir, templateFor(dataDir));
  await pg.waitReady;
  await pg.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${schema}, public;`);
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
      const target = message.txId === undefined ? pg : transactions.get(message.txId)?.tx;
      if (!target) throw new Error(`no open transaction ${message.txId}`);
      return (await target.query(message.sql, message.params)).rows;
    }
    case "begin":
      return begin(message.txId);
    case "commit":
      return finish(message.txId, true);
    case "rollback":
      return finish(message.txId, false);
    case "listen":
      await pg.listen(message.channel, (payload) => port.postMessage({ notify: message.channel, payload }));
      return undefined;
    case "close":
      if (pg && !pg.closed) await pg.close();
      return undefined;
    default:
      throw new Error(`unknown operation ${message.op}`);
  }
}

port.on("message", (message) => {
  handle(message).then(
    (rows) => port.postMessage({ id: message.id, rows }),
    (error) => port.postMessage({ id: message.id, error: plainError(error) }),
  );
});
