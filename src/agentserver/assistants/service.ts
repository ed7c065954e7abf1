import { isDeepStrictEqual } from "node:util";
import { v4 as uuid4, v5 as uuid5 } from "uuid";
import { conflict, invalidField, notFound } from "../../http/errors.ts";
import type { Database } from "../../storage/database.ts";
import type { AssistantDefaults } from "../graphs/env-config.ts";
import type { GraphLike, GraphRegistry } from "../graphs/registry.ts";
import { drawGraph, graphSchemas, listSubgraphs, type GraphSchemas, type StaticLookup, type SubgraphSchemas, type Xray } from "./graph-info.ts";
import type { SchemaSet } from "./graph-schemas/extract.ts";
import * as sql from "./repository.ts";
import type { AssistantFields, AssistantFilter, AssistantRow, VersionRow } from "./repository.ts";
import type {
  Assistant,
  AssistantCountRequest,
  AssistantCreate,
  AssistantPatch,
  AssistantSearchRequest,
  AssistantVersionsSearchRequest,
  SelectField,
} from "./schemas.ts";

/** The namespace of system assistant ids: `uuid5(graph_id, NAMESPACE_GRAPH)`, as the vendor's servers. */
const NAMESPACE_GRAPH = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/** The id of the assistant the server creates for `graphId` at start. */
export const systemAssistantId = (graphId: string): string => uuid5(graphId, NAMESPACE_GRAPH);

// Stricter than ajv's "uuid" format (which allows a `urn:uuid:` prefix PostgreSQL refuses).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface AssistantServiceDeps {
  db: Database;
  graphs: GraphRegistry;
  now?: () => Date;
  /**
   * Schemas the TypeScript compiler reads from the project's graph types, by graph id
   * and namespace (graph-schemas/static-schemas.ts). Without it, graphs without zod
   * schemas get the types their channels show at run time.
   */
  typedSchemas?: { of(graphId: string): Promise<Record<string, SchemaSet> | undefined> };
  /**
   * Keep assistants read in memory (each run reads its assistant): only when every write
   * to them goes through this service, i.e. the database is this process's alone.
   */
  cacheReads?: boolean;
}

/** Assistants kept by `cacheReads`, and for runs (`forRun`), at most this many each (the oldest read goes first). */
const CACHED_ASSISTANTS = 1000;

/** What was read of an assistant, for the statement that queues a run to check (migration 0024). */
export interface AssistantStamp {
  version: number;
  updatedAt: string;
}

interface SearchResult {
  assistants: Partial<Assistant>[];
  /** Assistants matching the filter, across all pages. */
  total: number;
  /** The offset of the next page, when there is one. */
  next?: number;
}

/**
 * The rules of assistants: system assistants per graph, versions on every change,
 * graph ids accepted wherever an assistant id is. Never sees HTTP.
 *
 * @example
 * const assistants = new AssistantService({ db, graphs });
 * await assistants.ensureSystemAssistants();
 * const agent = await assistants.get("agent"); // the system assistant of graph "agent"
 */
export class AssistantService {
  private readonly cache?: Map<string, Assistant>;
  /** Assistants read for runs on a shared database, checked when each run is queued (`forRun`). */
  private readonly forRuns = new Map<string, Assistant>();

  private readonly now: () => Date;

  constructor(private readonly deps: AssistantServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    if (deps.cacheReads) this.cache = new Map();
  }

  /**
   * One assistant per graph (`created_by: system`, named after the graph); safe to repeat
   * and to race. `defaults` (LANGGRAPH_CONFIG) give the config and context of the ones it
   * creates; as on the vendor's servers an existing assistant is left as it is. Returns
   * the graphs whose existing assistant differs from its defaults, for a warning.
   */
  async ensureSystemAssistants(defaults: ReadonlyMap<string, AssistantDefaults> = new Map()): Promise<{ differing: string[] }> {
    const differing: string[] = [];
    for (const graphId of this.deps.graphs.ids()) {
      const given = defaults.get(graphId);
      const fields: AssistantFields = {
        graph_id: graphId,
        name: graphId,
        description: this.deps.graphs.description(graphId) ?? null,
        config: given?.config ?? {},
        context: given?.context ?? {},
        metadata: { created_by: "system" },
      };
      await this.deps.db.transaction(async (tx) => {
        const id = systemAssistantId(graphId);
        const now = this.now();
        if (await sql.insertAssistant(tx, id, fields, now)) {
          await sql.insertVersion(tx, id, 1, fields, now);
          return;
        }
        const current = given && (await sql.findAssistant(tx, id));
        if (current && !(isDeepStrictEqual(current.config ?? {}, fields.config) && isDeepStrictEqual(current.context ?? {}, fields.context))) {
          differing.push(graphId);
        }
      });
    }
    return { differing };
  }

  /**
   * The uuid an assistant id or graph id stands for. A graph id names its system
   * assistant; anything else that is not a uuid cannot name an assistant: not found.
   */
  resolveId(idOrGraphId: string): string {
    if (this.deps.graphs.has(idOrGraphId)) return systemAssistantId(idOrGraphId);
    if (UUID.test(idOrGraphId)) return idOrGraphId.toLowerCase();
    throw notFound(`Assistant "${idOrGraphId}" not found`);
  }

  async get(idOrGraphId: string): Promise<Assistant> {
    const id = this.resolveId(idOrGraphId);
    const cached = this.cache?.get(id);
    if (cached) return structuredClone(cached);
    const assistant = await this.read(idOrGraphId, id);
    if (this.cache) keep(this.cache, id, assistant);
    return assistant;
  }

  /**
   * The assistant a new run uses. On a database of the process's own, `get`. On a shared
   * one, what this process read before, with the `stamp` the statement queueing the run
   * checks (runs/queue-repository.ts enqueueRunFast): another process may have changed or
   * deleted it since. `fresh` reads it again, after such a check failed.
   */
  async forRun(idOrGraphId: string, fresh = false): Promise<{ assistant: Assistant; stamp?: AssistantStamp }> {
    if (!this.deps.db.shared) return { assistant: await this.get(idOrGraphId) };
    const id = this.resolveId(idOrGraphId);
    let assistant = fresh ? undefined : this.forRuns.get(id);
    if (!assistant) {
      this.forRuns.delete(id);
      assistant = await this.read(idOrGraphId, id);
      keep(this.forRuns, id, assistant);
    }
    return { assistant: structuredClone(assistant), stamp: { version: assistant.version, updatedAt: assistant.updated_at } };
  }

  private async read(idOrGraphId: string, id: string): Promise<Assistant> {
    const row = await sql.findAssistant(this.deps.db, id);
    if (!row) throw notFound(`Assistant "${idOrGraphId}" not found`);
    return toWire(row);
  }

  /** Forgets what was read of `id` (every assistant without one), after a write, failed or not. */
  private forget<T>(id: string | undefined, write: Promise<T>): Promise<T> {
    return write.finally(() => {
      for (const kept of [this.cache, this.forRuns]) {
        if (id === undefined) kept?.clear();
        else kept?.delete(id);
      }
    });
  }

  async create(input: AssistantCreate): Promise<Assistant> {
    this.requireGraph(input.graph_id);
    let id = uuid4();
    if (input.assistant_id != null) {
      if (!UUID.test(input.assistant_id)) throw invalidField(["body", "assistant_id"], "must be a UUID", "uuid_parsing");
      id = input.assistant_id.toLowerCase();
    }
    const fields: AssistantFields = {
      graph_id: input.graph_id,
      name: input.name ?? "Untitled",
      description: input.description ?? null,
      config: input.config ?? {},
      context: input.context ?? {},
      metadata: input.metadata ?? {},
    };
    const now = this.now();
    const created = await this.deps.db.transaction(async (tx) => {
      const row = await sql.insertAssistant(tx, id, fields, now);
      if (row) await sql.insertVersion(tx, id, 1, fields, now);
      return row;
    });
    if (created) return toWire(created);
    if ((input.if_exists ?? "raise") === "raise") throw conflict(`Assistant "${id}" already exists`);
    return this.get(id);
  }

  /**
   * Every update is a new version (the highest so far + 1) and becomes current.
   * `config` and `context` replace, `metadata` merges key by key, absent fields stay.
   */
  async patch(idOrGraphId: string, input: AssistantPatch): Promise<Assistant> {
    if (input.graph_id != null) this.requireGraph(input.graph_id);
    const id = this.resolveId(idOrGraphId);
    const row = await this.forget(
      id,
      this.deps.db.transaction(async (tx) => {
        const current = await sql.findAssistant(tx, id, true);
        if (!current) return undefined;
        const fields: AssistantFields = {
          graph_id: input.graph_id ?? current.graph_id,
          name: input.name ?? current.name,
          description: input.description !== undefined ? input.description : current.description,
          config: input.config ?? current.config,
          context: input.context ?? current.context,
          metadata: input.metadata ? { ...current.metadata, ...input.metadata } : current.metadata,
        };
        const version = (await sql.maxVersion(tx, id)) + 1;
        const now = this.now();
        await sql.insertVersion(tx, id, version, fields, now);
        return sql.updateCurrent(tx, id, version, fields, now);
      }),
    );
    if (!row) throw notFound(`Assistant "${idOrGraphId}" not found`);
    return toWire(row);
  }

  /**
   * `deleteThreadsOf` deletes the threads (with their runs and checkpoints) whose
   * `metadata.assistant_id` is the assistant: the threads domain supplies it. Without
   * it, `deleteThreads` is refused rather than ignored.
   */
  async delete(idOrGraphId: string, options: { deleteThreads?: boolean; deleteThreadsOf?: (assistantId: string) => Promise<unknown> } = {}): Promise<void> {
    const id = this.resolveId(idOrGraphId);
    const { deleteThreadsOf } = options;
    if (options.deleteThreads && !deleteThreadsOf) {
      throw invalidField(["query", "delete_threads"], "deleting an assistant's threads is not supported by this server");
    }
    if (!(await sql.findAssistant(this.deps.db, id))) throw notFound(`Assistant "${idOrGraphId}" not found`);
    if (options.deleteThreads) await deleteThreadsOf!(id);
    if (!(await this.forget(id, sql.deleteAssistant(this.deps.db, id)))) throw notFound(`Assistant "${idOrGraphId}" not found`);
  }

  /** A page of assistants, newest first unless told otherwise, projected to `select`. */
  async search(input: AssistantSearchRequest): Promise<SearchResult> {
    const limit = input.limit ?? 10;
    const offset = input.offset ?? 0;
    const { rows, total } = await sql.searchAssistants(this.deps.db, filterOf(input), {
      sortBy: input.sort_by ?? "created_at",
      sortOrder: input.sort_order ?? "desc",
      limit,
      offset,
    });
    const select = input.select?.length ? new Set<SelectField>(input.select) : undefined;
    const assistants = rows.map((row) => project(toWire(row), select));
    return { assistants, total, next: offset + rows.length < total ? offset + rows.length : undefined };
  }

  async count(input: AssistantCountRequest): Promise<number> {
    return sql.countAssistants(this.deps.db, filterOf(input));
  }

  /** Versions newest first; an unknown assistant is a 404, not an empty list. */
  async versions(idOrGraphId: string, input: AssistantVersionsSearchRequest): Promise<Assistant[]> {
    const id = (await this.get(idOrGraphId)).assistant_id;
    const rows = await sql.listVersions(this.deps.db, id, {
      metadata: input.metadata ?? undefined,
      limit: input.limit ?? 10,
      offset: input.offset ?? 0,
    });
    return rows.map((row) => toWire({ ...row, updated_at: row.created_at }));
  }

  /** Makes an earlier (or later) version the current one; no new version is made. */
  async setLatest(idOrGraphId: string, version: number): Promise<Assistant> {
    const id = this.resolveId(idOrGraphId);
    const row = await this.forget(
      id,
      this.deps.db.transaction(async (tx) => {
        if (!(await sql.findAssistant(tx, id, true))) throw notFound(`Assistant "${idOrGraphId}" not found`);
        const chosen: VersionRow | undefined = await sql.findVersion(tx, id, version);
        if (!chosen) throw notFound(`Assistant "${idOrGraphId}" has no version ${version}`);
        return sql.updateCurrent(tx, id, version, chosen, this.now());
      }),
    );
    return toWire(row);
  }

  /** The drawing of the assistant's graph; `xray` expands subgraphs (to a depth when a number). */
  async drawGraph(idOrGraphId: string, xray: Xray): Promise<Record<string, unknown[]>> {
    const { assistant, graph } = await this.graphOf(idOrGraphId);
    return drawGraph(graph, runnableConfig(assistant), xray);
  }

  async schemas(idOrGraphId: string): Promise<GraphSchemas & { graph_id: string }> {
    const { assistant, graph } = await this.graphOf(idOrGraphId);
    return { graph_id: assistant.graph_id, ...(await graphSchemas(graph, this.typedSchemasOf(assistant.graph_id))) };
  }

  async subgraphs(idOrGraphId: string, namespace: string | undefined, recurse: boolean): Promise<Record<string, SubgraphSchemas>> {
    const { assistant, graph } = await this.graphOf(idOrGraphId);
    return listSubgraphs(graph, namespace, recurse, this.typedSchemasOf(assistant.graph_id), runnableConfig(assistant));
  }

  private typedSchemasOf(graphId: string): StaticLookup {
    return async () => this.deps.typedSchemas?.of(graphId);
  }

  private async graphOf(idOrGraphId: string): Promise<{ assistant: Assistant; graph: GraphLike }> {
    const assistant = await this.get(idOrGraphId);
    // An assistant can outlive its graph (a later revision dropped it from langgraph.json).
    this.requireGraph(assistant.graph_id);
    return { assistant, graph: await this.deps.graphs.resolve(assistant.graph_id, runnableConfig(assistant)) };
  }

  private requireGraph(graphId: string): void {
    if (!this.deps.graphs.has(graphId)) throw notFound(`Graph "${graphId}" not found`);
  }
}

function filterOf(input: AssistantCountRequest): AssistantFilter {
  return { metadata: input.metadata ?? undefined, graphId: input.graph_id ?? undefined, name: input.name ?? undefined };
}

/** What a factory graph receives: the assistant's config, with its context alongside. */
function runnableConfig(assistant: Assistant): Record<string, unknown> {
  return { ...assistant.config, context: assistant.context };
}

function project(assistant: Assistant, select: Set<SelectField> | undefined): Partial<Assistant> {
  if (!select) return assistant;
  return Object.fromEntries(Object.entries(assistant).filter(([key]) => select.has(key as SelectField)));
}

const iso = (value: Date | string) => new Date(value).toISOString();

/** Keeps a copy of `assistant`, giving up the oldest kept when full. */
function keep(kept: Map<string, Assistant>, id: string, assistant: Assistant): void {
  if (kept.size >= CACHED_ASSISTANTS) kept.delete(kept.keys().next().value!);
  kept.set(id, structuredClone(assistant));
}

function toWire(row: AssistantRow): Assistant {
  return {
    assistant_id: row.assistant_id,
    graph_id: row.graph_id,
    config: row.config ?? {},
    context: row.context ?? {},
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    metadata: row.metadata ?? {},
    version: Number(row.version),
    name: row.name,
    description: row.description ?? null,
  };
}
