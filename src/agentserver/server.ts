import { resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { AGENT_DEFAULTS, databasePoolSize, type AgentServerOptions } from "../config/agent.ts";
import { createHttpServer } from "../http/server.ts";
import { registerCors, type CorsConfig } from "../http/cors.ts";
import { AGENT_EXPOSED_HEADERS } from "../http/expose-headers.ts";
import { registerRateLimit } from "../ratelimit/plugin.ts";
import { openDatabase } from "../storage/open.ts";
import type { Database } from "../storage/database.ts";
import { requireApiKey } from "./api-key.ts";
import { AssistantService, graphSources, registerAssistantRoutes, StaticGraphSchemas, systemAssistantId } from "./assistants/index.ts";
import { SlipwaySaver } from "./checkpointer/index.ts";
import { createCrons, registerCronRoutes } from "./crons/index.ts";
import { loadProjectAuth } from "./custom-auth/handlers.ts";
import { registerCustomAuth } from "./custom-auth/register.ts";
import { prepareProject, type PreparedProject } from "./graphs/project.ts";
import { loadGraphs } from "./graphs/registry.ts";
import { ConfigError } from "./graphs/langgraph-config.ts";
import { resolveWebhookHeaders } from "./graphs/webhooks-config.ts";
import type { WebhookPolicy } from "./runs/webhook.ts";
import { bindLoopbackFetch } from "./http-app/loopback.ts";
import { prepareProjectHttp } from "./http-app/project-http.ts";
import { agentActivity, type AgentActivity } from "./meta/activity.ts";
import { registerMetaRoutes } from "./meta/routes.ts";
import { registerMetricsRoute } from "./meta/metrics-route.ts";
import { registerA2aRoutes } from "./a2a/routes.ts";
import { registerMcpRoutes } from "./mcp/routes.ts";
import { deleteIdleMcpSessions } from "./mcp/session-repository.ts";
import { ownApi } from "./own-api.ts";
import { streamChannel } from "./runs/announcements.ts";
import { RunCompletion } from "./runs/completion.ts";
import { RunLifecycle } from "./runs/lifecycle.ts";
import { subscribeRunParts } from "./runs/lifecycle-listeners.ts";
import { threadRunFeed } from "./runs/run-feed.ts";
import { WorkerPool } from "./runs/worker-pool.ts";
import { AssistantHandoff } from "./runs/assistant-handoff.ts";
import { createAttemptRunner } from "./runs/attempt.ts";
import { deleteOldRunResults } from "./runs/repository.ts";
import { registerThreadRunRoutes } from "./runs/routes.ts";
import { RunService } from "./runs/service.ts";
import { registerStatelessRunRoutes } from "./runs/stateless-routes.ts";
import { storeFromConfig } from "./store/from-config.ts";
import { registerStoreRoutes } from "./store/index.ts";
import { READER_LIMIT, StreamBroker } from "./stream/broker.ts";
import { runStreamReader } from "./stream/run-join.ts";
import { StreamRelay } from "./stream/relay.ts";
import { closeServer } from "../http/close-server.ts";
import { registerThreadStreamRoutes } from "./stream/thread-stream-routes.ts";
import { computeThreadSnapshot, refreshThreadSnapshot, registerThreadRoutes, sweepExpiredThreads, ThreadService, ThreadStateService } from "./threads/index.ts";
import { threadExists } from "./threads/repository.ts";
import { SLIPWAY_VERSION } from "../config/version.ts";

export interface RunningAgentServer {
  /** `http://host:port<prefix>`, or on a socket `http+unix://<path, URL-encoded><prefix>`. */
  url: string;
  /** The socket it listens on (options.socketPath), if any. */
  socketPath?: string;
  /** http.mount_prefix: where the API lives below the root ("" without one). */
  basePath: string;
  /** http.cors of its langgraph.json, for the router's own answers (none: the default). */
  cors?: CorsConfig;
  app: FastifyInstance;
  storage: "pglite" | "postgres";
  db: Database;
  /** Claims no new runs; runs in progress and requests go on (a replaced revision draining). */
  drain(): void;
  /** Runs underway and the next scheduled work: what a control plane asks before letting the deployment sleep. */
  activity(): Promise<AgentActivity>;
  close(): Promise<void>;
}

/**
 * Wires an agent server: storage, graphs of the langgraph.json, services, the run
 * queue and the HTTP API. This is the only place that builds these parts.
 */
export async function startAgentServer(options: AgentServerOptions): Promise<RunningAgentServer> {
  const project = prepareProject(options.configPath);

  const db = await openDatabase({
    storageSocket: options.storageSocket,
    databaseUrl: options.databaseUrl,
    dataDir: options.databaseUrl || options.storageSocket ? undefined : resolve(options.dataDir ?? AGENT_DEFAULTS.dataDir),
    schema: options.schema ?? AGENT_DEFAULTS.schema,
    component: "agent",
    poolSize: databasePoolSize(options.workers ?? AGENT_DEFAULTS.workers),
  });
  try {
    return await assemble(db, project, options);
  } catch (error) {
    await db.close();
    throw error;
  }
}

async function assemble(db: Database, project: PreparedProject, options: AgentServerOptions): Promise<RunningAgentServer> {
  const { config } = project;
  // Before anything loads: a header naming a variable that is not set stops the start.
  const webhookHeaders = webhookHeadersOf(config);
  const now = () => new Date();
  const newId = () => crypto.randomUUID();
  // http.app, http.mount_prefix, http.configurable_headers and ui of langgraph.json.
  const projectHttp = await prepareProjectHttp(config);
  // The app comes first: its logger is the one every part below logs to. Nothing listens yet.
  const app = await createHttpServer({
    title: "Slipway agent server",
    version: SLIPWAY_VERSION,
    validationStyle: "message",
    bodyLimit: options.bodyLimit ?? AGENT_DEFAULTS.bodyLimit,
    logLevel: options.logLevel,
    serverFactory: projectHttp.serverFactory,
  });
  const log = app.log;
  for (const message of config.warnings) log.warn(message);

  const checkpointer = new SlipwaySaver(db);
  const store = await storeFromConfig(db, config, log);
  const graphs = await loadGraphs(config, { checkpointer, store });
  // auth.path: loaded before anything listens, so that a broken handler stops the start.
  // A Python one came with the graphs, from the worker that runs them.
  const customAuth = config.auth
    ? await loadProjectAuth(config.auth, graphs).catch(async (error: unknown) => {
        await graphs.close();
        throw error;
      })
    : undefined;
  const assistants = new AssistantService({
    db,
    graphs,
    now,
    // A database of our own is written by this process alone: what it read stays true.
    cacheReads: !db.shared,
    // Read from the project's TypeScript types on first use, then saved beside it (decision 0013).
    typedSchemas: new StaticGraphSchemas({ root: config.root, sources: graphSources(config), log }),
  });
  const { differing } = await assistants.ensureSystemAssistants(project.assistantDefaults);
  for (const graphId of differing) {
    log.warn(
      { graph_id: graphId, assistant_id: systemAssistantId(graphId) },
      "LANGGRAPH_CONFIG differs from the stored system assistant of this graph; it applies only when the assistant is created: PATCH the assistant to change it",
    );
  }
  const broker = new StreamBroker({
    bufferedEvents: options.streamBufferEvents,
    readerLimit: options.streamReaderEvents ? { ...READER_LIMIT, items: options.streamReaderEvents } : undefined,
  });
  const completion = new RunCompletion(db, log);
  await completion.start();
  // Several agent servers may share the database (PostgreSQL, or a shared embedded one): streams follow runs across them.
  const relay = db.shared ? new StreamRelay(db, streamChannel(db.schema), broker, completion, { log }) : undefined;
  if (relay) {
    await relay.start();
    broker.useRelay(relay);
  }
  const refreshThread = (threadId: string, outcome?: { runError?: unknown }) => refreshThreadSnapshot({ db, graphs }, threadId, outcome);
  const webhookPolicy: WebhookPolicy = {
    allowHosts: options.webhookAllowHosts ?? [],
    onlyAllowed: false,
    rules: config.webhooks.url,
    headers: webhookHeaders,
  };
  const lifecycle = new RunLifecycle(log);
  subscribeRunParts(lifecycle, {
    db,
    broker,
    completion,
    relaySent: relay ? () => relay.sent() : undefined,
    webhookPolicy,
    sendWebhooks: !config.http.webhooksOff,
    log,
  });

  const handoff = new AssistantHandoff();
  const runAttempt = createAttemptRunner({
    db,
    graphs,
    streams: broker,
    lifecycle,
    assistants,
    checkpointer,
    snapshotOf: (threadId, outcome, fromRun) => computeThreadSnapshot({ db, graphs }, threadId, outcome, fromRun),
    refreshThread,
    handoff,
    log,
  });
  const pool = new WorkerPool(
    db,
    lifecycle,
    runAttempt,
    {
      workers: options.workers ?? AGENT_DEFAULTS.workers,
      leaseSeconds: options.leaseSeconds ?? AGENT_DEFAULTS.leaseSeconds,
      heapFraction: options.runHeapFraction ?? AGENT_DEFAULTS.runHeapFraction,
      exclusiveStorage: !db.shared,
    },
    log,
  );
  const runs = new RunService({
    db,
    lifecycle,
    completion,
    assistants,
    refreshThread,
    abortLocal: (runId) => pool.abortLocal(runId),
    webhookPolicy,
    newId,
    handoff,
    claimer: pool,
  });
  // Crons queue runs like POST /runs does; their scheduler fires in every process at once.
  const crons = createCrons({
    db,
    assistants,
    webhookPolicy,
    now,
    newId,
    lifecycle,
    stopRun: (runId, action) => runs.cancel(undefined, runId, { wait: false, action }),
    log,
  });
  const cancelRunsOf = async (threadId: string) => {
    // The thread goes anyway; a run left executing ends when it finds its thread gone.
    await runs
      .cancelMany({ threadId, status: "all" }, "interrupt")
      .catch((error) => log.warn({ err: error, thread_id: threadId }, "cancelling the runs of a deleted thread failed"));
  };
  const threads = new ThreadService({
    db,
    graphs,
    checkpointer,
    now,
    newId,
    beforeDelete: cancelRunsOf,
  });

  // The limiter goes first: a request refused by the key check still counts (OPTIONS
  // preflights too: the table has a row for them). Then CORS, which answers preflights
  // before the key check (browsers send none with them).
  if (options.rateLimit) registerRateLimit(app, options.rateLimit);
  const exposedHeaders = [...AGENT_EXPOSED_HEADERS];
  registerCors(app, config.http.cors, exposedHeaders);
  requireApiKey(app, options.apiKey);
  if (customAuth) {
    registerCustomAuth(app, customAuth, {
      db,
      resolveAssistant: (id) => {
        try {
          return assistants.resolveId(id);
        } catch {
          return undefined;
        }
      },
    });
  }
  projectHttp.registerHooks(app);
  registerMetaRoutes(app, { version: SLIPWAY_VERSION, graphIds: graphs.ids(), storage: db.kind, db });
  registerMetricsRoute(app, {
    db,
    lifecycle,
    workers: () => pool.workerStats(),
    streamReaders: () => broker.readerCount(),
    labels: { project_id: options.deploymentId ?? "", revision_id: options.revisionId ?? "" },
  });
  // langgraph.json's http.disable_<group> turns a group of routes off.
  const enabled = (group: "assistants" | "threads" | "runs" | "store" | "mcp" | "a2a") => !config.http.disabled.has(group);
  // DELETE /assistants/{id}?delete_threads=true removes the threads that ran it.
  if (enabled("assistants")) registerAssistantRoutes(app, { assistants, deleteThreadsOf: (id) => threads.deleteOfAssistant(id) });
  if (enabled("threads")) {
    registerThreadRoutes(app, { threads, state: new ThreadStateService({ db, graphs, checkpointer }) });
    registerThreadStreamRoutes(app, { broker, runFeed: threadRunFeed(db), threadExists: (id) => threadExists(db, id), heartbeatMs: options.heartbeatMs });
  }
  const runDeps = { runs, streams: runStreamReader(broker), db, heartbeatMs: options.heartbeatMs ?? AGENT_DEFAULTS.heartbeatMs };
  if (enabled("runs")) {
    registerThreadRunRoutes(app, runDeps);
    registerStatelessRunRoutes(app, runDeps);
    registerCronRoutes(app, { crons: crons.service });
  }
  if (enabled("store")) registerStoreRoutes(app, { store });
  // MCP and A2A call the routes above in process, as their caller (decision 0042).
  const api = ownApi(app);
  const protocolDeps = { api, heartbeatMs: options.heartbeatMs ?? AGENT_DEFAULTS.heartbeatMs };
  if (enabled("mcp")) registerMcpRoutes(app, { ...protocolDeps, db, version: SLIPWAY_VERSION });
  if (enabled("a2a")) registerA2aRoutes(app, { ...protocolDeps, mountPrefix: config.http.mountPrefix ?? "" });
  projectHttp.registerRoutes(app);
  const serveInProcess = projectHttp.attach(app, { apiKey: options.apiKey, exposedHeaders, customAuth, pythonApp: graphs.pythonApp });

  if (options.socketPath) await app.listen({ path: options.socketPath });
  else await app.listen({ port: options.port ?? AGENT_DEFAULTS.port, host: options.host ?? AGENT_DEFAULTS.host });
  // new Client() without an apiUrl, in a graph node or a route of http.app, reaches this server in process.
  const unbindLoopback = bindLoopbackFetch(serveInProcess, options.apiKey);
  try {
    await pool.start();
    await crons.scheduler.start();
    store.start();
  } catch (error) {
    // The caller closes the database; what listens or ticks here must stop with it.
    await crons.scheduler.stop().catch((e) => log.warn({ err: e }, "stopping the cron scheduler after a failed start"));
    await pool.stop(0).catch((e) => log.warn({ err: e }, "stopping the worker pool after a failed start"));
    await graphs.close();
    store.stop();
    unbindLoopback();
    await app.close();
    await relay?.close();
    throw error;
  }
  // Threads created with a ttl (or given checkpointer.ttl's default) are deleted or pruned once it runs out.
  const threadTtl = config.checkpointer.ttl;
  const sweepPolicy = {
    defaultTtl: threadTtl?.defaultTtl ? { strategy: threadTtl.strategy, ttl_minutes: threadTtl.defaultTtl } : undefined,
    limit: threadTtl?.sweepLimit ?? 1000,
  };
  const ttlSweep = setInterval(
    () => {
      sweepExpiredThreads({ db, checkpointer, beforeDelete: cancelRunsOf }, now(), 100, sweepPolicy).catch((error) =>
        log.warn({ err: error }, "thread TTL sweep failed"),
      );
      deleteOldRunResults(db).catch((error) => log.warn({ err: error }, "removing old stateless run results failed"));
      deleteIdleMcpSessions(db).catch((error) => log.warn({ err: error }, "removing idle MCP sessions failed"));
    },
    (threadTtl?.sweepIntervalMinutes ?? 1) * 60_000,
  );
  ttlSweep.unref();
  // Under http.mount_prefix the API lives below it, /ok included.
  const basePath = config.http.mountPrefix ?? "";
  const url = options.socketPath ? `http+unix://${encodeURIComponent(options.socketPath)}${basePath}` : `${tcpOrigin(app, options)}${basePath}`;

  let closed = false;
  return {
    url,
    socketPath: options.socketPath,
    basePath,
    cors: config.http.cors,
    app,
    storage: db.kind,
    db,
    drain() {
      pool.cordon();
    },
    activity() {
      return agentActivity(db);
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(ttlSweep);
      const grace = options.shutdownGraceMs ?? AGENT_DEFAULTS.shutdownGraceMs;
      await crons.scheduler.stop();
      await pool.stop(grace);
      await graphs.close();
      store.stop();
      // Nothing still open can end here any more: streams end now (their runs execute
      // elsewhere, or they are thread streams); requests still waiting are cut off after
      // the grace period, instead of holding the shutdown for ever.
      unbindLoopback();
      await closeServer(app, grace);
      await relay?.close();
      await db.close();
    },
  };
}

function tcpOrigin(app: FastifyInstance, options: AgentServerOptions): string {
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const host = options.host ?? AGENT_DEFAULTS.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** The `webhooks.headers` values, from the environment prepareProject filled with langgraph.json's `env`. */
function webhookHeadersOf(config: PreparedProject["config"]): Record<string, string> {
  try {
    return resolveWebhookHeaders(config.webhooks, process.env);
  } catch (error) {
    throw new ConfigError(`${config.root}/langgraph.json: ${(error as Error).message}`);
  }
}
