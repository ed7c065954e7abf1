// @ts-check
// The statements a server sends over and over (each run's queueing, saves and end) run
// on the embedded database as named prepared statements: parsed and planned once, then
// one call into PostgreSQL per execution (bind, execute, sync). PGlite's `query` makes
// six calls for every statement (parse, describe, bind, describe, execute, sync) and
// plans it each time; for a one-row insert that is about 110 µs against 30 µs here.
// Parameters and results go through PGlite's own codecs, by the types PostgreSQL gave
// when the statement was prepared, so values read and write as `query` has them.

const enc = new TextEncoder();

/** One frontend message: type byte, length, body. */
function message(type, ...parts) {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(5 + length);
  out[0] = type.charCodeAt(0);
  new DataView(out.buffer).setInt32(1, 4 + length);
  let at = 5;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const cstring = (text) => {
  const bytes = enc.encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
};
const int16 = (n) => new Uint8Array([(n >> 8) & 0xff, n & 0xff]);
const int32 = (n) => new Uint8Array([(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);

function concat(parts) {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const SYNC = message("S");
const EXECUTE = message("E", cstring(""), int32(0));
/** Statements that are planned queries; anything else (DDL, SET, ...) keeps PGlite's path. */
const PREPARABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;

/** An answer of a batch whose statement did not run as prepared: the statement changed shape, or is gone. */
const isStale = (answer) => "error" in answer && (answer.error?.code === "0A000" || answer.error?.code === "26000");

/**
 * @typedef {{ name: string; paramTypes: number[]; fields: Array<{ name: string; dataTypeID: number }> }} Prepared
 */

export class PreparedStatements {
  /**
   * @param {any} pg an open PGlite
   * @param {number} limit statements kept prepared; the least recently used goes first
   */
  constructor(pg, limit = 500) {
    this.pg = pg;
    this.limit = limit;
    /** @type {Map<string, Prepared | null>} null: not preparable, PGlite's path */
    this.bySql = new Map();
    /** @type {Map<string, Promise<Prepared | null>>} statements being prepared: their other callers wait for that */
    this.preparing = new Map();
    this.count = 0;
  }

  /**
   * The rows of `sql` with `params`, as `pg.query(sql, params).rows` would give them.
   * Inside a transaction (`tx`, PGlite's) only statements prepared before are used: one
   * prepared in a transaction that fails would be remembered as not preparable.
   */
  async query(sql, params = [], tx = undefined) {
    let prepared = this.bySql.get(sql);
    if (prepared) this.touch(sql, prepared);
    if (prepared === undefined && !tx) prepared = await this.prepareOnce(sql);
    if (!prepared) return (await (tx ?? this.pg).query(sql, params)).rows;
    try {
      return this.rowsOf(prepared, await this.exclusive([this.bind(prepared, params), EXECUTE, SYNC], Boolean(tx)));
    } catch (error) {
      // Not run: the statement no longer fits its tables as prepared (or is gone). It goes
      // PGlite's way this time and is prepared again the next.
      if (error?.code !== "0A000" && error?.code !== "26000") throw error;
      this.forget(sql, prepared);
      // Inside a transaction the failure has already aborted it: sent again, the statement
      // could only fail with 25P02, which would hide why. The transaction fails with the
      // cause, and the statement is prepared afresh for the next one.
      if (tx) throw error;
      return (await this.pg.query(sql, params)).rows;
    }
  }

  /**
   * Statements outside any transaction, from callers that do not wait on each other, as
   * one call and one commit when all of them are prepared: bind and execute each, one
   * sync. Each answer is `{ rows }` or `{ error }`, in order. The implicit transaction
   * makes them all or nothing, so when one fails, none is kept and all are run again
   * one by one (each then answers for itself, as if they had never met). Statements
   * not yet prepared go each as if sent alone.
   * @param {Array<{ sql: string; params?: unknown[] }>} items
   * @returns {Promise<Array<{ rows: unknown[] } | { error: unknown }>>}
   */
  async queryMany(items) {
    const prepared = items.map((item) => this.bySql.get(item.sql));
    /** @type {Uint8Array[] | undefined} undefined: a parameter its serializer refuses, which fails alone below */
    let binds;
    if (items.length > 1 && prepared.every(Boolean)) {
      try {
        binds = items.map((item, i) => this.bind(prepared[i], item.params ?? []));
      } catch {
        binds = undefined;
      }
    }
    if (binds) {
      // Before the wait, as query does: touched after it, a statement the cache gave up
      // (and closed) meanwhile would be taken back under a name that no longer exists.
      for (let i = 0; i < items.length; i++) this.touch(items[i].sql, prepared[i]);
      const answers = await this.batch(prepared, binds);
      // A statement whose prepared form no longer fits (0A000, 26000) did not run: it goes
      // PGlite's way, as in query.
      return Promise.all(answers.map((answer, i) => (isStale(answer) ? this.answerOf(items[i]) : answer)));
    }
    // Queued in the order sent, as each would be alone.
    return Promise.all(items.map((item) => this.answerOf(item)));
  }

  /** @param {{ sql: string; params?: unknown[] }} item */
  answerOf(item) {
    return this.query(item.sql, item.params).then(
      (rows) => ({ rows }),
      (error) => ({ error }),
    );
  }

  /**
   * The batch as one call and one commit, under one hold of PGlite's lock. When one
   * statement fails, the others are not kept either: each then runs again alone, with a
   * commit of its own, still under that hold, so that nothing sent after the batch (and
   * queued behind it) runs before them.
   */
  batch(prepared, binds) {
    return this.locked(async (call) => {
      const parts = [];
      for (const bind of binds) parts.push(bind, EXECUTE);
      parts.push(SYNC);
      const together = this.split(prepared, await call(parts, false));
      if (together) return together.map((rows) => ({ rows }));
      const answers = [];
      for (let i = 0; i < binds.length; i++) {
        const messages = await call([binds[i], EXECUTE, SYNC], false);
        const error = messages.find((m) => m.name === "error");
        answers.push(error ? { error } : { rows: this.rowsOf(prepared[i], messages) });
      }
      return answers;
    });
  }

  /** The rows of each statement of a batch, or undefined when one of them failed. */
  split(prepared, messages) {
    const answers = [];
    let current = [];
    for (const m of messages) {
      if (m.name === "error") return undefined;
      if (m.name === "bindComplete") current = [];
      else if (m.name === "dataRow") current.push(m);
      else if (m.name === "commandComplete") answers.push(this.rowsOf(prepared[answers.length], current));
    }
    return answers.length === prepared.length ? answers : undefined;
  }

  /** Most recently used last: the first is the one to give up when the cache is full. */
  touch(sql, prepared) {
    this.bySql.delete(sql);
    this.bySql.set(sql, prepared);
  }

  /** One preparation of `sql` for all who ask while it is under way (each would leave a copy prepared). */
  prepareOnce(sql) {
    let pending = this.preparing.get(sql);
    if (!pending) {
      pending = this.prepare(sql).finally(() => this.preparing.delete(sql));
      this.preparing.set(sql, pending);
    }
    return pending;
  }

  /** @returns {Promise<Prepared | null>} */
  async prepare(sql) {
    if (!PREPARABLE.test(sql)) return null;
    if (this.bySql.size >= this.limit) {
      const [oldestSql, oldest] = this.bySql.entries().next().value;
      if (oldest) this.forget(oldestSql, oldest);
      else this.bySql.delete(oldestSql);
    }
    const name = `slipway_${++this.count}`;
    let messages;
    try {
      messages = await this.exclusive([message("P", cstring(name), cstring(sql), int16(0)), message("D", enc.encode("S"), cstring(name)), SYNC]);
    } catch (error) {
      // Several commands in one string (42601) can never be prepared: remembered. Any other
      // error (a table not there yet) PGlite's own path reports as usual, and the next
      // call tries again.
      if (error?.code === "42601") this.bySql.set(sql, null);
      return null;
    }
    const params = messages.find((m) => m.name === "parameterDescription");
    const rows = messages.find((m) => m.name === "rowDescription");
    /** @type {Prepared} */
    const prepared = {
      name,
      paramTypes: params?.dataTypeIDs ?? [],
      fields: (rows?.fields ?? []).map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
    };
    this.bySql.set(sql, prepared);
    return prepared;
  }

  /** Closes `prepared`; `sql` is forgotten only while it still names that one (a caller may have prepared it again meanwhile). */
  forget(sql, prepared) {
    if (this.bySql.get(sql) === prepared) this.bySql.delete(sql);
    this.exclusive([message("C", enc.encode("S"), cstring(prepared.name)), SYNC]).catch(() => undefined);
  }

  /** Bind: the statement's parameters as text, through PGlite's serializer for each type. */
  bind(prepared, params) {
    const parts = [cstring(""), cstring(prepared.name), int16(0), int16(params.length)];
    for (let i = 0; i < params.length; i++) {
      const value = params[i];
      if (value === null || value === undefined) {
        parts.push(int32(-1));
        continue;
      }
      const serialize = this.pg.serializers[prepared.paramTypes[i]];
      const bytes = enc.encode(serialize ? serialize(value) : value.toString());
      parts.push(int32(bytes.length), bytes);
    }
    parts.push(int16(0));
    return message("B", concat(parts));
  }

  rowsOf(prepared, messages) {
    const rows = [];
    const fields = prepared.fields;
    for (const m of messages) {
      if (m.name !== "dataRow") continue;
      const row = {};
      for (let i = 0; i < fields.length; i++) {
        const text = m.fields[i];
        const parse = this.pg.parsers[fields[i].dataTypeID];
        row[fields[i].name] = text === null ? null : parse ? parse(text, fields[i].dataTypeID) : text;
      }
      rows.push(row);
    }
    return rows;
  }

  /**
   * One call into the database, between other queries and transactions as `query` is;
   * inside a transaction, which holds PGlite's transaction lock, between its queries only.
   */
  exclusive(parts, inTransaction = false) {
    return this.locked((call) => call(parts), inTransaction);
  }

  /**
   * `work` under PGlite's locks, given `call(parts, throwOnError)` for calls into the
   * database (their messages; without throwOnError an error is among them), and written
   * to the file system after it unless inside a transaction.
   */
  async locked(work, inTransaction = false) {
    const pg = this.pg;
    await pg._checkReady();
    const call = async (parts, throwOnError = true) => (await pg.execProtocol(concat(parts), { syncToFs: false, throwOnError })).messages;
    const run = () =>
      pg._runExclusiveQuery(async () => {
        const result = await work(call);
        if (!inTransaction) await pg.syncToFs();
        return result;
      });
    return inTransaction ? run() : pg._runExclusiveTransaction(run);
  }
}
