// @ts-check
// A database thread: PGlite (PostgreSQL in WebAssembly) runs here, so its CPU time does
// not stall the server's event loop. It hosts one embedded database or, for deployments,
// several (decision 0057), each a HostedDatabase of its own (pglite-hosted-database.mjs).
// pglite.ts is the other end. Every message names its database: { db, id, op, ... }
// requests (the first for a database is { op: "open", config }) and { db, id, rows | error }
// answers, plus { db, notify, payload } for SQL-level NOTIFY, { db, upkeep } and
// { db, warning }. Plain JavaScript on purpose: a worker thread does not inherit the
// TypeScript loader of its parent.
import { parentPort } from "node:worker_threads";
import { HostedDatabase } from "./pglite-hosted-database.mjs";
import { plainError } from "./pglite-errors.mjs";

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);

/** The databases this thread hosts, by the number pglite.ts gave each. */
const databases = new Map();

/** @param {Record<string, any>} message */
function route(message) {
  let database = databases.get(message.db);
  if (message.op === "open" && !database) {
    const db = message.db;
    database = new HostedDatabase(message.config, (reply) => port.postMessage({ ...reply, db }));
    databases.set(db, database);
  }
  if (!database) {
    port.postMessage({ db: message.db, id: message.id, error: { message: `no database ${message.db} on this thread` } });
    return;
  }
  // After its close is answered, a database is forgotten: the thread may host another.
  if (message.op === "close") {
    const closing = database;
    // Queries that came first keep their place, as in receive().
    closing.runTogether();
    closing.handle(message).then(
      (rows) => {
        databases.delete(message.db);
        closing.post({ id: message.id, rows });
      },
      (error) => {
        databases.delete(message.db);
        closing.post({ id: message.id, error: plainError(error) });
      },
    );
    return;
  }
  database.receive(message);
}

port.on("message", (message) => {
  for (const one of message.batch ?? [message]) route(one);
});
