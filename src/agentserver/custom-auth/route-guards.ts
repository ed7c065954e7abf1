import type { FastifyRequest } from "fastify";
import { conflict, notFound } from "../../http/errors.ts";
import type { Queryable } from "../../storage/database.ts";
import { containment, matches, type AuthFilters } from "./filters.ts";
import { AuthRefusal, type AuthContext } from "./handlers.ts";
import { assistantMetadata } from "../assistants/repository.ts";
import { cronMetadata } from "../crons/repository.ts";
import { threadOfRun } from "../runs/repository.ts";
import { threadMetadata } from "../threads/repository.ts";

/**
 * Which `on` handler each route calls, with which value, and how its answer applies:
 * a changed value is written back into the request (a handler may set
 * `value.metadata.owner`); filters narrow a search (merged into its metadata filter) or
 * must hold for the one resource a route touches (else 404, as if it did not exist).
 * Runs are reached through their thread, as on the vendor's server.
 */
interface GuardContext {
  request: FastifyRequest;
  context: AuthContext;
  db: Queryable;
  authorize(resource: string, action: string, value: Record<string, unknown>): Promise<AuthFilters | undefined>;
  /** The uuid an assistant id or graph id stands for; undefined when it names none. */
  resolveAssistant(idOrGraphId: string): string | undefined;
  /** Store routes read the filters from here (see store/routes.ts). */
  setStoreFilters(filters: AuthFilters | undefined): void;
}

type Guard = (g: GuardContext) => Promise<void>;

type Body = Record<string, unknown>;
const bodyOf = (g: GuardContext): Body => (g.request.body ?? {}) as Body;
const params = (g: GuardContext) => g.request.params as Record<string, string>;

async function requireThread(g: GuardContext, threadId: string | undefined, filters: AuthFilters | undefined): Promise<void> {
  if (!filters || !threadId) return;
  const metadata = await threadMetadata(g.db, threadId);
  // No such thread: the route answers its own 404 (or creates it, for if_not_exists).
  if (metadata !== undefined && !matches(metadata, filters)) throw notFound(`Thread with ID ${threadId} not found`);
}

async function requireAssistant(g: GuardContext, idOrGraphId: string, filters: AuthFilters | undefined): Promise<void> {
  if (!filters) return;
  const id = g.resolveAssistant(idOrGraphId);
  const metadata = id ? await assistantMetadata(g.db, id) : undefined;
  if (metadata !== undefined && !matches(metadata, filters)) throw notFound(`Assistant with ID ${idOrGraphId} not found`);
}

/** A handler's changes to `metadata` go into the request the route then serves. */
function writeBackMetadata(g: GuardContext, value: Body): void {
  const body = bodyOf(g);
  if (value.metadata && typeof value.metadata === "object") body.metadata = value.metadata;
}

const threadRead =
  (action: "read" | "update" | "delete"): Guard =>
  async (g) => {
    const threadId = params(g).thread_id;
    await requireThread(g, threadId, await g.authorize("threads", action, { thread_id: threadId }));
  };

/** A search or count: its metadata filter and the handler's filters must both hold. */
const search =
  (resource: "threads" | "assistants" | "crons"): Guard =>
  async (g) => {
    const body = bodyOf(g);
    const value: Body = { ...body, metadata: { ...((body.metadata as Body | null) ?? {}) } };
    const filters = await g.authorize(resource, "search", value);
    if (filters) body.metadata = containment(filters, (body.metadata as Body | null) ?? {});
  };

/**
 * A run on a thread: `threads:create_run`; the run's config carries the user, as on the
 * vendor's server. A thread the run creates (stateless, or `if_not_exists: "create"`)
 * takes the run's metadata as the handler left it (its owner); one that exists must match.
 */
async function createRun(g: GuardContext, body: Body, threadId: string | undefined): Promise<void> {
  const value: Body = { ...body, thread_id: threadId ?? null, metadata: { ...((body.metadata as Body | null) ?? {}) } };
  const filters = await g.authorize("threads", "create_run", value);
  if (value.metadata && typeof value.metadata === "object") body.metadata = value.metadata;
  await requireThread(g, threadId, filters);
  carryUser(g, body);
}

/** The run's config carries the user, as on the vendor's server (a cron's runs too). */
function carryUser(g: GuardContext, body: Body): void {
  const config = (body.config && typeof body.config === "object" ? body.config : (body.config = {})) as Body;
  const configurable = (config.configurable && typeof config.configurable === "object" ? config.configurable : (config.configurable = {})) as Body;
  configurable.langgraph_auth_user = g.context.user;
  configurable.langgraph_auth_user_id = g.context.user.identity;
  configurable.langgraph_auth_permissions = g.context.scopes;
  // The vendor's `user_id`: the caller's own wins, else the authenticated identity.
  if (configurable.user_id === undefined) configurable.user_id = g.context.user.identity;
}

/**
 * `crons:create`: the handler may stamp the cron's metadata (its owner); a cron on a
 * thread needs that thread to match; the cron's runs carry the user who created it.
 */
async function createCron(g: GuardContext, threadId: string | undefined): Promise<void> {
  const body = bodyOf(g);
  const value: Body = { ...body, thread_id: threadId ?? null, metadata: { ...((body.metadata as Body | null) ?? {}) } };
  const filters = await g.authorize("crons", "create", value);
  writeBackMetadata(g, value);
  await requireThread(g, threadId, filters);
  carryUser(g, body);
}

/** One cron by id: the handler's filters must hold for its metadata (else 404). */
const cronAction =
  (action: "read" | "update" | "delete"): Guard =>
  async (g) => {
    const cronId = params(g).cron_id!;
    const value: Body =
      action === "update" ? { ...bodyOf(g), cron_id: cronId, metadata: { ...((bodyOf(g).metadata as Body | null) ?? {}) } } : { cron_id: cronId };
    const filters = await g.authorize("crons", action, value);
    if (action === "update") writeBackMetadata(g, value);
    if (!filters) return;
    const metadata = await cronMetadata(g.db, cronId);
    if (metadata !== undefined && !matches(metadata, filters)) throw notFound(`Cron ${cronId} not found`);
  };

const runOfThread =
  (action: "read" | "update" | "delete"): Guard =>
  async (g) => {
    const { thread_id: threadId, run_id: runId } = params(g);
    const filters = await g.authorize("threads", action, { thread_id: threadId, run_id: runId ?? null });
    await requireThread(g, threadId, filters);
  };

/** Stateless routes name a run only: its thread decides. */
const runById: Guard = async (g) => {
  const runId = params(g).run_id!;
  const filters = await g.authorize("threads", "read", { run_id: runId });
  if (!filters) return;
  const threadId = await threadOfRun(g.db, runId);
  const metadata = threadId ? await threadMetadata(g.db, threadId) : undefined;
  if (metadata !== undefined && !matches(metadata, filters)) throw notFound(`Run with ID ${runId} not found`);
};

const assistantAction =
  (action: "read" | "update" | "delete"): Guard =>
  async (g) => {
    const assistantId = params(g).assistant_id!;
    const value: Body = action === "update" ? { ...bodyOf(g), assistant_id: assistantId } : { assistant_id: assistantId };
    if (action === "update") value.metadata = { ...((bodyOf(g).metadata as Body | null) ?? {}) };
    const filters = await g.authorize("assistants", action, value);
    if (action === "update" && g.request.method === "PATCH") writeBackMetadata(g, value);
    await requireAssistant(g, assistantId, filters);
  };

/** A store item as the vendor matches filters: its value's fields, its namespace and key. */
const storeItem = (namespace: unknown, key: unknown, value: unknown) => ({ ...((value as Body | null) ?? {}), namespace, key });

export const ROUTE_GUARDS: Record<string, Guard> = {
  // Threads.
  "POST /threads": async (g) => {
    const body = bodyOf(g);
    const value: Body = {
      ...body,
      thread_id: body.thread_id ?? null,
      metadata: { ...((body.metadata as Body | null) ?? {}) },
      if_exists: body.if_exists ?? "raise",
    };
    const filters = await g.authorize("threads", "create", value);
    writeBackMetadata(g, value);
    // An existing thread of someone else is not theirs to get back with if_exists=do_nothing.
    const existing = typeof body.thread_id === "string" ? await threadMetadata(g.db, body.thread_id) : undefined;
    if (existing !== undefined && filters && !matches(existing, filters)) throw conflict(`Thread with ID ${String(body.thread_id)} already exists`);
  },
  "POST /threads/search": search("threads"),
  "POST /threads/count": search("threads"),
  "POST /threads/prune": async (g) => {
    const body = bodyOf(g);
    const ids = Array.isArray(body.thread_ids) ? (body.thread_ids as string[]) : [];
    const filters = await g.authorize("threads", "delete", { thread_ids: ids });
    if (!filters) return;
    // Threads the caller may not see are left alone, as missing ones are.
    const kept: string[] = [];
    for (const id of ids) {
      const metadata = await threadMetadata(g.db, id);
      if (metadata !== undefined && matches(metadata, filters)) kept.push(id);
    }
    body.thread_ids = kept;
  },
  "GET /threads/:thread_id": threadRead("read"),
  "PATCH /threads/:thread_id": async (g) => {
    const threadId = params(g).thread_id;
    const value: Body = { ...bodyOf(g), thread_id: threadId, metadata: { ...((bodyOf(g).metadata as Body | null) ?? {}) } };
    const filters = await g.authorize("threads", "update", value);
    writeBackMetadata(g, value);
    await requireThread(g, threadId, filters);
  },
  "DELETE /threads/:thread_id": threadRead("delete"),
  // Copying reads the source and creates a thread (the vendor's fix of 0.0.66: copies
  // once skipped `threads:create`, so a handler refusing creation could be bypassed).
  "POST /threads/:thread_id/copy": async (g) => {
    const threadId = params(g).thread_id!;
    await requireThread(g, threadId, await g.authorize("threads", "read", { thread_id: threadId }));
    const metadata = (await threadMetadata(g.db, threadId)) ?? {};
    const created = await g.authorize("threads", "create", { thread_id: null, metadata: { ...metadata }, if_exists: "raise" });
    // The copy keeps the source's metadata: it must satisfy what creating demands.
    if (created && !matches(metadata, created)) throw notFound(`Thread with ID ${threadId} not found`);
  },
  "GET /threads/:thread_id/state": threadRead("read"),
  "GET /threads/:thread_id/state/:checkpoint_id": threadRead("read"),
  "POST /threads/:thread_id/state/checkpoint": threadRead("read"),
  "GET /threads/:thread_id/history": threadRead("read"),
  "POST /threads/:thread_id/history": threadRead("read"),
  "POST /threads/:thread_id/state": threadRead("update"),
  "PATCH /threads/:thread_id/state": threadRead("update"),
  "GET /threads/:thread_id/stream": threadRead("read"),
  "GET /threads/:thread_id/storage": threadRead("read"),
  // Runs of a thread.
  "POST /threads/:thread_id/runs": (g) => createRun(g, bodyOf(g), params(g).thread_id),
  "POST /threads/:thread_id/runs/stream": (g) => createRun(g, bodyOf(g), params(g).thread_id),
  "POST /threads/:thread_id/runs/wait": (g) => createRun(g, bodyOf(g), params(g).thread_id),
  "GET /threads/:thread_id/runs": runOfThread("read"),
  "GET /threads/:thread_id/runs/:run_id": runOfThread("read"),
  "GET /threads/:thread_id/runs/:run_id/join": runOfThread("read"),
  "GET /threads/:thread_id/runs/:run_id/stream": runOfThread("read"),
  "POST /threads/:thread_id/runs/:run_id/cancel": runOfThread("update"),
  "DELETE /threads/:thread_id/runs/:run_id": runOfThread("delete"),
  // Stateless runs: no thread the caller names, so nothing to match; the handler may refuse.
  "POST /runs": (g) => createRun(g, bodyOf(g), undefined),
  "POST /runs/stream": (g) => createRun(g, bodyOf(g), undefined),
  "POST /runs/wait": (g) => createRun(g, bodyOf(g), undefined),
  "POST /runs/batch": async (g) => {
    for (const run of (g.request.body as Body[] | undefined) ?? []) await createRun(g, run, undefined);
  },
  "POST /runs/cancel": async (g) => {
    const body = bodyOf(g);
    const filters = await g.authorize("threads", "update", { thread_id: body.thread_id ?? null, run_ids: body.run_ids ?? null });
    if (!filters) return;
    if (typeof body.thread_id === "string") await requireThread(g, body.thread_id, filters);
    for (const runId of Array.isArray(body.run_ids) ? (body.run_ids as string[]) : []) {
      const threadId = await threadOfRun(g.db, runId);
      const metadata = threadId ? await threadMetadata(g.db, threadId) : undefined;
      if (metadata !== undefined && !matches(metadata, filters)) throw notFound(`Runs not found or not cancellable: ${runId}`);
    }
  },
  // Crons.
  "POST /runs/crons": (g) => createCron(g, undefined),
  "POST /threads/:thread_id/runs/crons": (g) => createCron(g, params(g).thread_id),
  "POST /runs/crons/search": search("crons"),
  "POST /runs/crons/count": search("crons"),
  "GET /runs/crons/:cron_id": cronAction("read"),
  "PATCH /runs/crons/:cron_id": cronAction("update"),
  "DELETE /runs/crons/:cron_id": cronAction("delete"),
  "GET /runs/:run_id": runById,
  "GET /runs/:run_id/stream": runById,
  // Assistants.
  "POST /assistants": async (g) => {
    const body = bodyOf(g);
    const value: Body = {
      ...body,
      assistant_id: body.assistant_id ?? null,
      metadata: { ...((body.metadata as Body | null) ?? {}) },
      if_exists: body.if_exists ?? "raise",
    };
    const filters = await g.authorize("assistants", "create", value);
    writeBackMetadata(g, value);
    // The body's assistant_id is a uuid (validated): a failure here is the database's, and
    // fails the request (logged by the error handler) rather than letting it through unchecked.
    const existing = typeof body.assistant_id === "string" ? await assistantMetadata(g.db, body.assistant_id) : undefined;
    if (existing !== undefined && filters && !matches(existing, filters)) throw conflict(`Assistant with ID ${String(body.assistant_id)} already exists`);
  },
  "POST /assistants/search": search("assistants"),
  "POST /assistants/count": search("assistants"),
  "GET /assistants/:assistant_id": assistantAction("read"),
  "GET /assistants/:assistant_id/graph": assistantAction("read"),
  "GET /assistants/:assistant_id/schemas": assistantAction("read"),
  "GET /assistants/:assistant_id/subgraphs": assistantAction("read"),
  "GET /assistants/:assistant_id/subgraphs/:namespace": assistantAction("read"),
  "POST /assistants/:assistant_id/versions": assistantAction("read"),
  "PATCH /assistants/:assistant_id": assistantAction("update"),
  "POST /assistants/:assistant_id/latest": assistantAction("update"),
  "DELETE /assistants/:assistant_id": assistantAction("delete"),
  // Store: a handler may rewrite the namespace (e.g. put the user's id first); filters
  // match the item's value fields, namespace and key.
  "PUT /store/items": async (g) => {
    const body = bodyOf(g);
    const value: Body = { namespace: body.namespace, key: body.key, value: body.value, index: body.index ?? null, ttl: body.ttl ?? null };
    const filters = await g.authorize("store", "put", value);
    body.namespace = value.namespace;
    body.key = value.key;
    body.value = value.value;
    // The vendor's JS server drops store filters (every item passes); here an item the
    // writer could not read back is refused, saying why.
    if (filters && !matches(storeItem(value.namespace, value.key, value.value), filters)) {
      throw new AuthRefusal(
        403,
        `The item would not match the store:put handler's filters (${JSON.stringify(filters)}); store filters match the item's value fields, namespace and key`,
      );
    }
    g.setStoreFilters(filters);
  },
  "GET /store/items": async (g) => {
    const query = g.request.query as Body;
    const value: Body = { namespace: namespaceOfQuery(query.namespace), key: query.key };
    const filters = await g.authorize("store", "get", value);
    query.namespace = value.namespace;
    query.key = value.key;
    g.setStoreFilters(filters);
  },
  "DELETE /store/items": async (g) => {
    const body = bodyOf(g);
    const value: Body = { namespace: body.namespace ?? [], key: body.key };
    const filters = await g.authorize("store", "delete", value);
    body.namespace = value.namespace;
    body.key = value.key;
    g.setStoreFilters(filters);
  },
  "POST /store/items/search": async (g) => {
    const body = bodyOf(g);
    const value: Body = {
      namespace: body.namespace_prefix ?? [],
      filter: body.filter ?? null,
      limit: body.limit,
      offset: body.offset,
      query: body.query ?? null,
    };
    const filters = await g.authorize("store", "search", value);
    body.namespace_prefix = value.namespace;
    g.setStoreFilters(filters);
  },
  "POST /store/namespaces": async (g) => {
    const body = bodyOf(g);
    const value: Body = {
      namespace: body.prefix ?? [],
      suffix: body.suffix ?? null,
      max_depth: body.max_depth ?? null,
      limit: body.limit,
      offset: body.offset,
    };
    const filters = await g.authorize("store", "list_namespaces", value);
    body.prefix = value.namespace;
    g.setStoreFilters(filters);
  },
};

/** The store's GET names its namespace dot-joined, or repeated: the handler sees labels. */
function namespaceOfQuery(raw: unknown): string[] {
  const parts = Array.isArray(raw) ? (raw as string[]) : typeof raw === "string" ? [raw] : [];
  return parts.flatMap((part) => (part === "" ? [] : part.split(".")));
}
