import { Command, InvalidArgumentError, type Command as CommandType } from "commander";
import { addRateLimitFlags } from "../ratelimit/cli-options.ts";
import { agentOptionsFromEnv, AGENT_DEFAULTS } from "../config/agent.ts";
import { registerTypeScriptLoader } from "./support/typescript-loader.mjs";

const positiveInt = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
  return n;
};

/**
 * `slipway agent`: serve one LangGraph project (its langgraph.json) as an agent
 * server. The control plane launches the same command for each deployment revision.
 */
export function registerAgentCommand(program: CommandType): void {
  program.addCommand(
    addRateLimitFlags(
      new Command("agent")
        .description("Serve the graphs of a langgraph.json as a LangGraph agent server")
        .requiredOption("--config <path>", "path to the project's langgraph.json (required)")
        .option("--port <port>", "port to listen on (0 picks a free one)", positiveInt("--port"), AGENT_DEFAULTS.port)
        .option("--host <host>", "address to bind", AGENT_DEFAULTS.host)
        .option("--socket <path>", "listen on this Unix socket (a named pipe on Windows) instead of --host/--port")
        .option("--data-dir <dir>", "embedded database directory", AGENT_DEFAULTS.dataDir)
        .option("--database-url <url>", "PostgreSQL server instead of the embedded database (env SLIPWAY_DATABASE_URL)")
        .option("--database-schema <name>", "schema for this server's tables", AGENT_DEFAULTS.schema)
        .option("--api-key <key>", "require this X-Api-Key on every route but /ok, /info, /docs, /openapi.json (env SLIPWAY_AGENT_API_KEY)")
        .option(
          "--workers <n>",
          `runs executed at once, at most (env SLIPWAY_AGENT_WORKERS; default ${AGENT_DEFAULTS.workers}; see below)`,
          positiveInt("--workers"),
        )
        .option("--webhook-allow <hosts>", "comma-separated hosts run webhooks may reach even if private (env SLIPWAY_WEBHOOK_ALLOW_HOSTS)")
        // The platform's rate-limit table belongs to the control plane (`slipway up`), not to
        // a deployed agent server: limits here are opt-in.
        .option("--rate-limit", "enforce the built-in rate-limit table (off by default; --rate-limit-policy also turns limits on)")
        .option(
          "--check",
          "validate langgraph.json and load every graph as a start would (no database, no port), print one JSON line and exit: 0 when the project would start, 1 with the cause on stderr",
        ),
    )
      .addHelpText(
        "after",
        "\nRate limits are off unless --rate-limit or --rate-limit-policy <file> is given: the platform's table\n" +
          "applies to the control plane (slipway up), not to agent servers. --no-rate-limit is accepted and keeps them off.\n" +
          '\n--check prints {"event":"check","ok":true,"graphs":[...]} on stdout and exits 0, or the cause on stderr\n' +
          '(graph, file, error and its first stack lines) and {"event":"check","ok":false,"error":...} and exits 1.\n' +
          "Graphs exported as factories of their config are imported but not called: they need a run's config.\n" +
          `\n--workers bounds the runs one process executes at once (default ${AGENT_DEFAULTS.workers}). A run waiting on a model\n` +
          "or a tool holds memory, not the CPU, so the default suits graphs that mostly wait; claiming also pauses\n" +
          `while the JavaScript heap is above ${AGENT_DEFAULTS.runHeapFraction * 100}% of its limit (node --max-old-space-size raises it).\n` +
          "For graphs that mostly compute, a few per core is enough.\n" +
          "\n--socket <path> serves the API on a Unix socket instead of a TCP port (the control plane starts its\n" +
          "agent processes so). The path must not exist yet; the socket is removed when the server stops. The\n" +
          'listening line then reads {"event":"listening","socket":<path>,"base_path":<http.mount_prefix>,\n' +
          '"url":"http+unix://<path, URL-encoded><base_path>",...}. Call it with e.g. curl --unix-socket <path>.',
      )
      .action(async (flags, command: CommandType) => {
        if (flags.check) return runCheck(flags.config);
        if (flags.socket !== undefined && (command.getOptionValueSource("port") === "cli" || command.getOptionValueSource("host") === "cli")) {
          console.error("slipway agent: --socket excludes --host and --port (it listens on the socket only)");
          process.exit(1);
        }
        if (flags.socket === undefined) {
          // Before anything is loaded or created (the data directory): a busy port is told at once.
          const { assertPortFree } = await import("../http/port-check.ts");
          await assertPortFree(flags.host, flags.port).catch((error: Error) => {
            console.error(`slipway agent: ${error.message}`);
            process.exit(1);
          });
        }
        const { startAgentServer } = await import("../agentserver/server.ts");
        const { apiKeyIdentity } = await import("../agentserver/api-key.ts");
        const { rateLimitFlagsFrom } = await import("../ratelimit/cli-options.ts");
        const { rateLimitOptionsFromFlags } = await import("../ratelimit/setup.ts");
        const options = agentOptionsFromEnv({
          configPath: flags.config,
          port: flags.port,
          host: flags.host,
          socketPath: flags.socket,
          dataDir: flags.dataDir,
          databaseUrl: flags.databaseUrl,
          schema: flags.databaseSchema,
          apiKey: flags.apiKey,
          workers: flags.workers,
          webhookAllowHosts: flags.webhookAllow
            ?.split(",")
            .map((s: string) => s.trim())
            .filter(Boolean),
        });
        try {
          const limits = rateLimitFlagsFrom(flags);
          limits.enabled = agentRateLimitEnabled(flags);
          options.rateLimit = await rateLimitOptionsFromFlags(limits, {
            resolveIdentity: apiKeyIdentity(options.apiKey),
            log: { warn: (object, message) => console.error(JSON.stringify({ level: "warn", msg: message, ...object })) },
          });
        } catch (error) {
          console.error(`slipway agent: ${(error as Error).message}`);
          process.exit(1);
        }
        // Its own embedded database runs in this process: the same V8 settings as `slipway up`'s (decision 0054).
        if (!options.databaseUrl && !options.storageSocket) {
          const { tuneControlPlaneV8 } = await import("./support/control-plane-v8.ts");
          tuneControlPlaneV8();
        }
        const { describeLoadFailure } = await import("../agentserver/graphs/load-error.ts");
        // After Slipway's own modules (loaded without it, fast), before the project's.
        await registerLoaderIfNeeded(flags.config);
        const server = await startAgentServer(options).catch((error: Error) => {
          // Configuration mistakes (langgraph.json, graphs that fail to load, storage) end here.
          if ((error as NodeJS.ErrnoException).code === "EADDRINUSE" && options.socketPath) {
            console.error(`slipway agent: ${options.socketPath} is in use: another server listens there, or a file was left behind (remove it)`);
            process.exit(1);
          }
          console.error(`slipway agent: ${describeLoadFailure(error)}`);
          process.exit(1);
        });
        // A shared embedded database whose host stopped (the control plane went away) leaves
        // nothing to serve with: stop, and let the supervisor start a new process.
        server.db.onLost?.((error) => {
          console.error(`slipway agent: storage lost: ${error.message}`);
          process.exit(1);
        });
        // Where graphs (and each run's metadata) find this server, as under the vendor's
        // dev server (not for a socket: no client outside could use that address).
        if (server.socketPath === undefined) process.env.LANGGRAPH_API_URL ??= server.url;
        // One machine-readable line: the control plane and tests read the address from it.
        // http.cors too: a router in front answers some requests itself, with the same CORS headers.
        const where = server.socketPath === undefined ? {} : { socket: server.socketPath, base_path: server.basePath };
        console.log(JSON.stringify({ event: "listening", url: server.url, ...where, storage: server.storage, cors: server.cors ?? null }));
        const shutdown = async () => {
          await server.close();
          process.exit(0);
        };
        process.once("SIGINT", shutdown);
        process.once("SIGTERM", shutdown);
        // In a container (the Docker runtime) there is no IPC channel: SIGUSR2 asks it to drain.
        process.on("SIGUSR2", () => server.drain());
        // Started by a control plane (an IPC channel): it may ask this revision to drain or
        // to stop (its signals would reach the sandbox, not this process), and when it goes
        // away (even killed), this process must not outlive it.
        if (process.send) {
          process.on("message", (message: { type?: string; id?: number }) => {
            if (message?.type === "drain") server.drain();
            if (message?.type === "stop") void shutdown();
            // Before letting the deployment sleep (docs/decisions/0039); no answer reads as busy.
            if (message?.type === "activity") {
              server
                .activity()
                .then((activity) => process.send?.({ type: "activity", id: message.id, ...activity }, () => undefined))
                .catch(() => undefined);
            }
          });
          process.once("disconnect", () => void shutdown());
        }
      }),
  );
}

/**
 * A project's TypeScript runs compiled (decision 0056); tsx's loader only when it cannot
 * be (said on stderr, a warning of the build log) or SLIPWAY_TYPESCRIPT=loader asks for it.
 */
async function registerLoaderIfNeeded(configPath: string): Promise<"javascript" | "compiled" | "loader"> {
  const { chooseTypeScriptMode } = await import("../agentserver/graphs/compile/typescript-mode.ts");
  const mode = await chooseTypeScriptMode(configPath);
  if (mode.kind === "loader") {
    if (mode.reason) warnTypeScript(`TypeScript not compiled (${mode.reason}): loading it through tsx`);
    await registerTypeScriptLoader();
  }
  return mode.kind;
}

function warnTypeScript(message: string): void {
  process.stderr.write(`${JSON.stringify({ level: "warn", msg: message })}\n`);
}

/**
 * Whether `slipway agent` enforces rate limits: only when asked, with --rate-limit (the
 * built-in table) or --rate-limit-policy <file>; --no-rate-limit wins over both.
 */
function agentRateLimitEnabled(flags: { rateLimit?: boolean; rateLimitPolicy?: string }): boolean {
  if (flags.rateLimit === false) return false;
  return flags.rateLimit === true || typeof flags.rateLimitPolicy === "string";
}

/**
 * The check of a compiled project that fails is done again through tsx: when that
 * passes, the compiled form is at fault, and the project's starts use tsx (recorded and
 * warned of); when it fails too, its error is the project's own.
 */
async function checkCompiledOrLoader(configPath: string, mode: string, check: (configPath: string) => Promise<string[]>): Promise<string[]> {
  try {
    return await check(configPath);
  } catch (error) {
    if (mode !== "compiled") throw error;
    const { forgetCompiledModules } = await import("../agentserver/graphs/compile/compiled-modules.ts");
    forgetCompiledModules();
    await registerTypeScriptLoader();
    // Through tsx too it fails: the project is at fault, and its error is said once, by the caller.
    const graphs = await check(configPath);
    const reason = `its compiled form failed the check: ${(error as Error).message ?? String(error)}`;
    const { recordFallback } = await import("../agentserver/graphs/compile/typescript-mode.ts");
    const { dirname, resolve } = await import("node:path");
    recordFallback(dirname(resolve(configPath)), reason);
    warnTypeScript(`TypeScript not compiled (${reason}): loading it through tsx`);
    return graphs;
  }
}

/**
 * `slipway agent --check`: the revision pipeline runs it at build time, so that a
 * broken project fails its build with its own error. The verdict is one JSON line on
 * stdout; the cause, for a human, goes to stderr.
 */
async function runCheck(configPath: string): Promise<never> {
  const { checkProject } = await import("../agentserver/check.ts");
  const { describeLoadFailure, GraphLoadError } = await import("../agentserver/graphs/load-error.ts");
  const mode = await registerLoaderIfNeeded(configPath);
  try {
    const graphs = await checkCompiledOrLoader(configPath, mode, checkProject);
    console.log(JSON.stringify({ event: "check", ok: true, graphs }));
    process.exit(0);
  } catch (error) {
    console.error(`slipway agent --check: ${describeLoadFailure(error)}`);
    const where = error instanceof GraphLoadError ? { graph: error.graphId, file: error.file } : {};
    console.log(JSON.stringify({ event: "check", ok: false, error: (error as Error).message ?? String(error), ...where }));
    process.exit(1);
  }
}
