import type {
  BaseStore,
  GetOperation,
  Item,
  ListNamespacesOperation,
  MatchCondition,
  Operation,
  OperationResults,
  PutOperation,
  SearchItem,
  SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { loadCheckpointPackage, loadedCheckpointPackage } from "../checkpointer/checkpoint-package.ts";
import type { Database, Queryable } from "../../storage/database.ts";
import { invalidField } from "../../http/errors.ts";
import { storeFilterConditions, type StoreAuthFilter } from "./auth-conditions.ts";
import { joinNamespace, keyProblem, namespaceProblem } from "./namespace.ts";
import * as sql from "./repository.ts";
import { embedAll, embedQuery, fieldsOfPut, textsOf, type SemanticIndex } from "./semantic-index.ts";

/** Upstream operations plus the TTL fields the vendor's server accepts. */
type StorePutOperation = PutOperation & { ttl?: number | null };
type StoreGetOperation = GetOperation & { refreshTtl?: boolean };
type StoreSearchOperation = SearchOperation & { refreshTtl?: boolean; authFilter?: StoreAuthFilter };
type StoreListOperation = ListNamespacesOperation & { authFilter?: StoreAuthFilter };

interface StoreTtlOptions {
  /** Minutes an item lives when its put names no ttl; unset: forever. */
  defaultTtl?: number;
  /** Whether reads push expiry out when the caller does not say (default true, as upstream). */
  refreshOnRead?: boolean;
  /** How often `start()` deletes expired rows (default 5). Expired rows are invisible meanwhile. */
  sweepIntervalMinutes?: number;
}

interface SlipwayStoreOptions {
  /** The clock every expiry decision reads; injected by tests. */
  now?: () => Date;
  ttl?: StoreTtlOptions;
  /** `store.index`: semantic search; without it, `query` and indexed fields are refused. */
  index?: SemanticIndex;
  /** Told when the TTL sweep fails (the agent server's logger); the console without one. */
  log?: StoreLog;
}

export interface StoreLog {
  warn(obj: unknown, msg: string): void;
}

/** What `#prepare` computed outside the transaction: vectors of puts, query vectors of searches. */
type Prepared = Map<Operation, sql.FieldVector[] | number[]>;

/**
 * The long-term memory store on our database: the `BaseStore` handed to graphs
 * (`config.store`) and the engine behind the `/store` API. Each `batch` runs in
 * one transaction, in order, so a read sees the writes before it.
 *
 * With an index (`store.index` of langgraph.json), puts embed the configured fields of
 * their value and a search with `query` ranks items by similarity; without one, `query`
 * is refused rather than answered by a plain listing.
 *
 * @example
 * const store = new SlipwayStore(db);
 * await store.put(["users", "u1"], "prefs", { theme: "dark" }, undefined, { ttl: 60 });
 * await store.search(["users"], { filter: { theme: "dark" } });
 */
export class SlipwayStore implements BaseStore {
  readonly #db: Database;
  readonly #now: () => Date;
  readonly #ttl: StoreTtlOptions;
  readonly #index: SemanticIndex | undefined;
  readonly #log: StoreLog;
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(db: Database, options: SlipwayStoreOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? (() => new Date());
    this.#ttl = options.ttl ?? {};
    this.#index = options.index;
    this.#log = options.log ?? { warn: (obj, msg) => console.warn(msg, obj) };
    if (this.#ttl.defaultTtl !== undefined) checkTtl(this.#ttl.defaultTtl);
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    // Its errors and path reader (checkNamespace, textsOf) come from the package, loaded at first use.
    await loadCheckpointPackage();
    const prepared = await this.#prepare(operations);
    // A lone operation of one statement needs no BEGIN/COMMIT round trips; a put with vectors is three.
    const single = operations.length === 1 && !(this.#index && isPut(operations[0]!));
    if (single) return [await this.#apply(this.#db, operations[0]!, prepared)] as OperationResults<Op>;
    return this.#db.transaction(async (tx) => {
      const results: unknown[] = [];
      for (const operation of operations) results.push(await this.#apply(tx, operation, prepared));
      return results as OperationResults<Op>;
    });
  }

  /** Whether semantic search is configured (`store.index`). */
  get indexed(): boolean {
    return this.#index !== undefined;
  }

  /**
   * Embeddings first, outside any transaction: the texts of every put (one model call for
   * all of them) and the query of every search. Invalid operations are left for #apply
   * to refuse with its own message.
   */
  async #prepare(operations: Operation[]): Promise<Prepared> {
    const prepared: Prepared = new Map();
    const index = this.#index;
    const puts = operations.filter((op): op is StorePutOperation => isPut(op) && (op as PutOperation).value != null);
    const texts = puts.map((op) => {
      const fields = fieldsOfPut(index, op.index);
      const value = op.value;
      return fields.length && value && typeof value === "object" && !Array.isArray(value) ? textsOf(value, fields) : [];
    });
    if (index && puts.length) {
      const vectors = await embedAll(index, texts);
      puts.forEach((op, i) => {
        prepared.set(op, vectors[i]!);
      });
    }
    for (const op of operations) {
      if (!("namespacePrefix" in op) || !op.query) continue;
      if (!index) throw invalidField(["query"], "semantic search needs store.index in langgraph.json (an embeddings model); omit query to list items");
      prepared.set(op, await embedQuery(index, op.query));
    }
    return prepared;
  }

  /** As upstream, plus `refreshTtl` (default: the store's `refreshOnRead`). */
  async get(namespace: string[], key: string, options: { refreshTtl?: boolean } = {}): Promise<Item | null> {
    const op: StoreGetOperation = { namespace, key, refreshTtl: options.refreshTtl };
    return (await this.batch([op]))[0];
  }

  /** As upstream, plus `ttl` in minutes (`null`: never expires; unset: the default ttl). */
  async put(namespace: string[], key: string, value: Record<string, unknown>, index?: false | string[], options: { ttl?: number | null } = {}): Promise<void> {
    await loadCheckpointPackage();
    checkNamespace(namespace, { write: true });
    const op: StorePutOperation = { namespace, key, value, index, ttl: options.ttl };
    await this.batch([op]);
  }

  /** As upstream, plus `refreshTtl` for the items returned. */
  async search(
    namespacePrefix: string[],
    options: {
      filter?: Record<string, unknown>;
      limit?: number;
      offset?: number;
      query?: string;
      refreshTtl?: boolean;
      /** Custom auth's filters: only items matching them are found. */
      authFilter?: StoreAuthFilter;
    } = {},
  ): Promise<SearchItem[]> {
    const { filter, limit = 10, offset = 0, query, refreshTtl, authFilter } = options;
    const op: StoreSearchOperation = { namespacePrefix, filter, limit, offset, query, refreshTtl, authFilter };
    return (await this.batch([op]))[0];
  }

  /** As upstream, without upstream's refusal of ":" in labels (the vendor's server accepts it). */
  async delete(namespace: string[], key: string): Promise<void> {
    const op: StorePutOperation = { namespace, key, value: null };
    await this.batch([op]);
  }

  /** As upstream; "*" in `prefix` or `suffix` matches any one label. */
  async listNamespaces(
    options: { prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number; offset?: number; authFilter?: StoreAuthFilter } = {},
  ): Promise<string[][]> {
    const { prefix, suffix, maxDepth, limit = 100, offset = 0, authFilter } = options;
    const matchConditions: MatchCondition[] = [];
    if (prefix) matchConditions.push({ matchType: "prefix", path: prefix });
    if (suffix) matchConditions.push({ matchType: "suffix", path: suffix });
    const op: StoreListOperation = { matchConditions, maxDepth, limit, offset, authFilter };
    return (await this.batch([op]))[0];
  }

  /** Deletes expired rows now; returns how many went. */
  async sweepExpired(): Promise<number> {
    return sql.deleteExpired(this.#db, this.#now());
  }

  start(): void {
    const minutes = this.#ttl.sweepIntervalMinutes ?? 5;
    if (this.#sweeper || minutes <= 0) return;
    this.#sweeper = setInterval(
      () => void this.sweepExpired().catch((error) => this.#log.warn({ err: error }, "store TTL sweep failed; it is tried again at the next interval")),
      minutes * 60_000,
    );
    this.#sweeper.unref();
  }

  stop(): void {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  // Graphs may bring their own copy of @langchain/langgraph, so operations are told
  // apart by their fields (as upstream does), never by class.
  async #apply(db: Queryable, op: Operation, prepared: Prepared): Promise<unknown> {
    if ("namespacePrefix" in op) return this.#search(db, op as StoreSearchOperation, prepared.get(op) as number[] | undefined);
    if ("namespace" in op && "key" in op) {
      return "value" in op ? this.#put(db, op as StorePutOperation, prepared.get(op) as sql.FieldVector[] | undefined) : this.#get(db, op as StoreGetOperation);
    }
    if ("matchConditions" in op || "limit" in op || "maxDepth" in op) return this.#list(db, op as StoreListOperation);
    throw new TypeError(`unknown store operation with fields ${Object.keys(op as object).join(", ")}`);
  }

  #get(db: Queryable, op: StoreGetOperation): Promise<Item | null> {
    checkNamespace(op.namespace, { allowEmpty: true });
    checkKey(op.key);
    const refresh = op.refreshTtl ?? this.#ttl.refreshOnRead ?? true;
    return sql.getItem(db, joinNamespace(op.namespace), String(op.key), this.#now(), refresh);
  }

  async #put(db: Queryable, op: StorePutOperation, vectors: sql.FieldVector[] | undefined): Promise<void> {
    checkKey(op.key);
    if (op.value === null || op.value === undefined) {
      checkNamespace(op.namespace, { allowEmpty: true });
      return sql.deleteItem(db, joinNamespace(op.namespace), String(op.key));
    }
    checkNamespace(op.namespace, {});
    if (typeof op.value !== "object" || Array.isArray(op.value)) throw invalidField(["value"], "must be an object");
    fieldsOfPut(this.#index, op.index);
    const ttl = op.ttl === undefined ? (this.#ttl.defaultTtl ?? null) : op.ttl;
    if (ttl !== null) checkTtl(ttl);
    const item = { path: joinNamespace(op.namespace), key: String(op.key), value: op.value, ttlMinutes: ttl };
    await sql.putItem(db, item, this.#now());
    // The value changed: vectors of its old text would rank it by what it no longer says.
    if (this.#index) await sql.replaceVectors(db, item.path, item.key, vectors ?? []);
  }

  async #search(db: Queryable, op: StoreSearchOperation, queryVector: number[] | undefined): Promise<SearchItem[]> {
    checkNamespace(op.namespacePrefix, { allowEmpty: true });
    if (op.query && (!this.#index || !queryVector)) {
      throw invalidField(["query"], "semantic search needs store.index in langgraph.json (an embeddings model); omit query to list items");
    }
    const refresh = op.refreshTtl ?? this.#ttl.refreshOnRead ?? true;
    const page = { limit: checkCount("limit", op.limit ?? 10), offset: checkCount("offset", op.offset ?? 0) };
    const semantic = op.query && this.#index ? { vector: queryVector!, dims: this.#index.dims, support: this.#index.support } : undefined;
    const conditions = op.authFilter ? (add: (value: unknown) => string) => storeFilterConditions(op.authFilter!, add) : undefined;
    const query = { prefix: joinNamespace(op.namespacePrefix), filter: op.filter, refresh, semantic, conditions, ...page };
    // An item without vectors has no score: the wire leaves the field out, as upstream's SearchItem does.
    const items = await sql.searchItems(db, query, this.#now());
    return items.map(({ score, ...item }) => (score === undefined || score === null ? item : { ...item, score }));
  }

  #list(db: Queryable, op: StoreListOperation): Promise<string[][]> {
    const query: sql.NamespaceQuery = { limit: checkCount("limit", op.limit ?? 100), offset: checkCount("offset", op.offset ?? 0) };
    if (op.authFilter) query.conditions = (add) => storeFilterConditions(op.authFilter!, add, { namespacesOnly: true });
    for (const condition of op.matchConditions ?? []) {
      checkNamespace(condition.path, { allowEmpty: true });
      if (condition.matchType !== "prefix" && condition.matchType !== "suffix") {
        throw invalidField(["matchType"], `unsupported match type ${JSON.stringify(condition.matchType)}`);
      }
      if (query[condition.matchType]) throw invalidField(["matchConditions"], "at most one prefix and one suffix condition are supported");
      query[condition.matchType] = condition.path;
    }
    if (op.maxDepth !== undefined && op.maxDepth !== null) {
      if (!Number.isInteger(op.maxDepth) || op.maxDepth < 1) throw invalidField(["max_depth"], "must be an integer of at least 1");
      query.maxDepth = op.maxDepth;
    }
    return sql.listNamespaces(db, query, this.#now());
  }
}

/** A put or a delete (a put of `null`): it names an item and carries `value`. */
function isPut(op: Operation): boolean {
  return "namespace" in op && "key" in op && "value" in op;
}

function checkNamespace(namespace: unknown, options: { allowEmpty?: boolean; write?: boolean }): void {
  const problem = namespaceProblem(namespace, options);
  if (problem) throw new (loadedCheckpointPackage().InvalidNamespaceError)(`Invalid namespace ${JSON.stringify(namespace)}: ${problem}`);
}

function checkKey(key: unknown): void {
  const problem = keyProblem(String(key));
  if (problem) throw invalidField(["key"], problem);
}

function checkTtl(ttl: unknown): void {
  if (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl <= 0) throw invalidField(["ttl"], "must be a positive number of minutes or null");
}

function checkCount(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw invalidField([name], "must be a non-negative integer");
  return value;
}
