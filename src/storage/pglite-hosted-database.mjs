// @ts-check
// One embedded database on a database thread (pglite-thread.mjs): its PGlite instance
// (its own WebAssembly memory and file system), prepared statements, open transactions,
// NOTIFY channels, socket and upkeep. A thread may host several (decision 0057); nothing
// here is shared between them but the thread's event loop.
import { getHeapSpaceStatistics } from "node:v8";
import { PGlite } from "@electric-sql/pglite";
import { useNativeBytea } from "./pglite-bytea.mjs";
import { DURABLE_START, DurableNodeFS, embeddedFsync } from "./pglite-durable-fs.mjs";
import { NEW_CLUSTER_INITDB, NEW_CLUSTER_START } from "./pglite-compact.mjs";
import { sharedPackageFiles } from "./pglite-package-files.mjs";
import { PreparedStatements } from "./pglite-prepared.mjs";
import { serveOnSocket } from "./pglite-sharing.mjs";
import { runUpkeep } from "./pglite-upkeep.mjs";
import { messageOf, plainError } from "./pglite-errors.mjs";

/**
 * PGlite runs one backend, yet PostgreSQL sizes its shared lock, predicate-lock and process
 * tables for max_connections (100 by default) and fills them as it starts: about 4 MB of
 * every database's memory for backends that never exist (decision 0059). Five is the
 * smallest count above the three superuser_reserved_connections.
 */
const ONE_BACKEND = ["-c", "max_connections=5"];

/** A billion transaction IDs: half way to the point where PostgreSQL refuses writes. */
const WRAPAROUND_WARNING_AGE = 1_000_000_000;

/** @typedef {{ dataDir: string; schema: string; upkeepEveryMs?: number; sharedBuffers?: string }} DatabaseConfig */

export class HostedDatabase {
  /** @type {PGlite} */
  pg;
  /** @type {PreparedStatements} */
  prepared;
  /** Open transactions: PGlite holds its lock until the callback we keep waiting returns. */
  transactions = new Map();
  /** Who hears each NOTIFY channel: the parent, and clients of the socket when shared. */
  channels = new Map();
  /** The socket server when this database is shared with other processes. */
  sharing;
  warnedOfWraparound = false;
  /** The upkeep's timer, and the pass under way (close waits for it). */
  upkeepTimer;
  upkeepPass;
  /** Queries outside transactions that arrived in one wake-up (see receive). */
  together = [];

  /**
   * @param {DatabaseConfig} config
   * @param {(message: Record<string, unknown>) => void} post sends a message to this database's other end
   */
  constructor(config, post) {
    this.config = config;
    this.post = post;
  }

  /** Delivers a channel's notifications to `deliver` (PGlite LISTENs once per channel); returns the unsubscribe. */
  async subscribe(channel, deliver) {
    let members = this.channels.get(channel);
    if (!members) {
      members = new Set();
      this.channels.set(channel, members);
      await this.pg.listen(channel, (payload) => this.publish(channel, payload));
    }
    members.add(deliver);
    return () => members.delete(deliver);
  }

  publish(channel, payload) {
    for (const deliver of [...(this.channels.get(channel) ?? [])]) deliver(payload);
  }

  async open() {
    const { dataDir, schema, upkeepEveryMs, sharedBuffers } = this.config;
    const inMemory = dataDir === "memory://" || dataDir === "";
    // A cluster in memory is new: made by initdb here, in 1 MB WAL segments (pglite-compact.mjs).
    // PGlite touches all of shared_buffers as it starts: PostgreSQL's 128 MB default is
    // resident for good, in every deployment's database (pglite.ts sets the size).
    const memory = [...(sharedBuffers ? ["-c", `shared_buffers=${sharedBuffers}`] : []), ...ONE_BACKEND];
    // On disk, commits reach the disk before they are answered (pglite-durable-fs.mjs). A
    // new directory was filled from the template before it was opened (pglite-template.ts).
    const fsBundle = sharedPackageFiles();
    this.pg = inMemory
      ? new PGlite({ fsBundle, initDbStartParams: NEW_CLUSTER_INITDB, startParams: [...NEW_CLUSTER_START, ...memory] })
      : embeddedFsync()
        ? new PGlite({ fsBundle, fs: new DurableNodeFS(dataDir), startParams: [...DURABLE_START, ...memory] })
        : new PGlite(dataDir, { fsBundle, startParams: [...PGlite.defaultStartParams, ...memory] });
    await this.pg.waitReady;
    useNativeBytea(this.pg);
    this.prepared = new PreparedStatements(this.pg);
    await this.pg.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${schema}, public;`);
    if (upkeepEveryMs && upkeepEveryMs > 0) this.upkeepTimer = setInterval(() => this.upkeep(), upkeepEveryMs).unref();
  }

  /** One pass of vacuuming and analyzing what is due (pglite-upkeep.mjs); its failures are reported, not thrown. */
  upkeep() {
    if (this.upkeepPass || this.pg.closed) return;
    this.upkeepPass = runUpkeep(this.pg)
      .then(
        ({ done, failed, oldestOther }) => {
          if (done.length > 0) this.post({ upkeep: done });
          if (oldestOther && oldestOther.xidAge > WRAPAROUND_WARNING_AGE && !this.warnedOfWraparound) {
            this.warnedOfWraparound = true;
            this.post({
              warning: `the embedded database's ${oldestOther.name} is ${oldestOther.xidAge} transaction IDs old and cannot be vacuumed from here; PostgreSQL stops accepting writes at about 2 billion: move this data to a PostgreSQL server`,
            });
          }
          for (const { sql, error } of failed) this.post({ warning: `embedded database upkeep: ${sql} failed: ${messageOf(error)}` });
        },
        (error) => this.post({ warning: `embedded database upkeep failed: ${messageOf(error)}` }),
      )
      .finally(() => (this.upkeepPass = undefined));
  }

  begin(txId) {
    return new Promise((ready, failed) => {
      this.pg
        .transaction(
          (tx) =>
            new Promise((commit, rollback) => {
              this.transactions.set(txId, { tx, commit, rollback });
              ready(undefined);
            }),
        )
        .then(
          () => this.transactions.get(txId)?.done?.(),
          (error) => {
            const open = this.transactions.get(txId);
            if (open?.done) open.done(error);
            else failed(error);
          },
        );
    });
  }

  /** Ends a transaction: resolves once PGlite has committed or rolled back. */
  finish(txId, commit) {
    const open = this.transactions.get(txId);
    if (!open) throw new Error(`no open transaction ${txId}`);
    return new Promise((resolve, reject) => {
      open.done = (error) => {
        this.transactions.delete(txId);
        // A rollback we asked for surfaces as the error we threw: that is success here.
        if (error && commit) reject(error);
        else resolve(undefined);
      };
      if (commit) open.commit();
      else open.rollback(new Error("rollback"));
    });
  }

  async handle(message) {
    switch (message.op) {
      case "open":
        return this.open();
      case "query": {
        if (message.txId === undefined) return this.prepared.query(message.sql, message.params);
        const tx = this.transactions.get(message.txId)?.tx;
        if (!tx) throw new Error(`no open transaction ${message.txId}`);
        return this.prepared.query(message.sql, message.params, tx);
      }
      case "begin":
        return this.begin(message.txId);
      case "commit":
        return this.finish(message.txId, true);
      case "rollback":
        return this.finish(message.txId, false);
      case "listen":
        await this.subscribe(message.channel, (payload) => this.post({ notify: message.channel, payload }));
        return undefined;
      case "serve":
        this.sharing = await serveOnSocket({
          socketPath: message.socketPath,
          schema: this.config.schema,
          handle: (request) => this.handle(request),
          subscribe: (channel, deliver) => this.subscribe(channel, deliver),
          publish: (channel, payload) => this.publish(channel, payload),
          rollback: (txId) => this.finish(txId, false),
          plainError,
        });
        return undefined;
      case "memory":
        return [this.memory()];
      case "close":
        clearInterval(this.upkeepTimer);
        // The socket first: it rolls back what other processes left open, which a pass
        // under way may be waiting for.
        await this.sharing?.close();
        await this.upkeepPass;
        if (this.pg && !this.pg.closed) await this.pg.close();
        return undefined;
      default:
        throw new Error(`unknown operation ${message.op}`);
    }
  }

  /** What this database and its thread hold (bench/pglite-memory.ts prints it). */
  memory() {
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]));
    return {
      wasmMemory: this.pg?.mod?.HEAPU8?.buffer.byteLength ?? 0,
      heapNewSpace: spaces.new_space ?? 0,
      heapOther: Object.values(spaces).reduce((sum, size) => sum + size, 0) - (spaces.new_space ?? 0),
      arrayBuffers: process.memoryUsage().arrayBuffers,
    };
  }

  answer(message) {
    this.handle(message).then(
      (rows) => this.post({ id: message.id, rows }),
      (error) => this.post({ id: message.id, error: plainError(error) }),
    );
  }

  /**
   * Queries outside transactions that reach this database together (in one wake-up) run
   * as one call and one commit (PreparedStatements.queryMany), and are answered in one
   * message: each statement alone spent more on its commit and the messages than inside
   * PostgreSQL.
   */
  runTogether() {
    const batch = this.together;
    this.together = [];
    if (batch.length === 0) return;
    if (batch.length === 1) return this.answer(batch[0]);
    this.prepared.queryMany(batch).then(
      (results) =>
        this.post({
          answers: results.map((result, i) =>
            "error" in result ? { id: batch[i].id, error: plainError(result.error) } : { id: batch[i].id, rows: result.rows },
          ),
        }),
      (error) => this.post({ answers: batch.map(({ id }) => ({ id, error: plainError(error) })) }),
    );
  }

  /** A request from the other end. */
  receive(message) {
    if (message.op === "query" && message.txId === undefined) {
      if (this.together.length === 0) setImmediate(() => this.runTogether());
      this.together.push(message);
      return;
    }
    // Queries that came first keep their place: they ask for PGlite's lock first.
    this.runTogether();
    this.answer(message);
  }
}
