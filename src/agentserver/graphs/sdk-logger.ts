import type { AsyncLocalStorage } from "node:async_hooks";
import pino, { type Logger as Pino } from "pino";

/**
 * `getLogger()` of `@langchain/langgraph-sdk/logging` returns whatever is stored on
 * globalThis under this symbol, and throws when nothing is. The vendor's server puts a
 * winston logger there; we put an object with winston's leveled methods, backed by pino.
 */
const GLOBAL_LOGGER = Symbol.for("langgraph.api.sdk-logger");

/** winston's npm levels and the pino level each one is written at. */
const LEVELS = {
  error: "error",
  warn: "warn",
  help: "info",
  data: "info",
  info: "info",
  prompt: "info",
  input: "info",
  http: "debug",
  verbose: "debug",
  debug: "debug",
  silly: "trace",
} as const;
type WinstonLevel = keyof typeof LEVELS;

type LeveledLogMethod = (message: unknown, ...meta: unknown[]) => SdkLogger;
type SdkLogger = Record<WinstonLevel, LeveledLogMethod> & { log(level: string, message: unknown, ...meta: unknown[]): SdkLogger };

interface SdkLoggerOptions {
  /** File descriptor written to: 1 (stdout) for a server, 2 for `--check`, whose stdout is its verdict. */
  fd?: number;
  /** A pino or winston level name; default `LOG_LEVEL` (the vendor's variable), else info. */
  level?: string;
}

/**
 * Registers the logger graphs reach through `getLogger()`. Each line is JSON and, when
 * written from inside a run, carries the run's ids (`run_id`, `thread_id`, `graph_id`,
 * `assistant_id`) and the node that logged (`langgraph_node`), read from the LangChain
 * config of the code that called it. Registering again replaces the previous logger.
 */
export function registerSdkLogger(options: SdkLoggerOptions = {}): SdkLogger {
  const target = pino(
    { level: pinoLevel(options.level ?? process.env.LOG_LEVEL), base: undefined, mixin: runFields },
    pino.destination({ fd: options.fd ?? 1, sync: true }),
  );
  const logger = wrap(target);
  (globalThis as Record<symbol, unknown>)[GLOBAL_LOGGER] = logger;
  return logger;
}

function wrap(target: Pino): SdkLogger {
  const logger = {} as SdkLogger;
  const write = (level: WinstonLevel, message: unknown, meta: unknown[]): SdkLogger => {
    const [fields, text] = entry(message, meta);
    target[LEVELS[level]](fields, text);
    return logger;
  };
  for (const level of Object.keys(LEVELS) as WinstonLevel[]) logger[level] = (message, ...meta) => write(level, message, meta);
  logger.log = (level, message, ...meta) => write(level in LEVELS ? (level as WinstonLevel) : "info", message, meta);
  return logger;
}

/**
 * winston's call shapes: `(message, ...meta)` where meta objects are merged into the
 * entry (an Error becomes `err`), or one info object holding `message` and fields.
 */
function entry(message: unknown, meta: unknown[]): [Record<string, unknown>, string | undefined] {
  const fields: Record<string, unknown> = {};
  let text: string | undefined;
  if (message instanceof Error) fields.err = message;
  else if (typeof message === "object" && message !== null) {
    const { message: inner, level: _level, ...rest } = message as Record<string, unknown>;
    Object.assign(fields, rest);
    if (inner !== undefined) text = typeof inner === "string" ? inner : JSON.stringify(inner);
  } else if (message !== undefined) text = String(message);
  const extra: unknown[] = [];
  for (const item of meta) {
    if (item instanceof Error) fields.err = item;
    else if (typeof item === "object" && item !== null && !Array.isArray(item)) Object.assign(fields, item);
    else extra.push(item);
  }
  if (extra.length) fields.meta = extra;
  return [fields, text];
}

/**
 * Where every copy of `@langchain/core` keeps the running config: the async local storage
 * it registers on globalThis, and the key of the config in its store. Read as
 * `AsyncLocalStorageProviderSingleton.getRunnableConfig()` of `@langchain/core/singletons`
 * does, without importing that module (and with it langsmith and half of
 * `@langchain/core`) into every agent process at start (decision 0053).
 */
const TRACING_ALS_KEY = Symbol.for("ls:tracing_async_local_storage");
const LC_CHILD_KEY = Symbol.for("lc:child_config");

type RunnableConfigLike = { configurable?: Record<string, unknown>; metadata?: Record<string, unknown> };

function runnableConfig(): RunnableConfigLike | undefined {
  const storage = (globalThis as Record<symbol, unknown>)[TRACING_ALS_KEY] as AsyncLocalStorage<{ extra?: Record<symbol, unknown> }> | undefined;
  return storage?.getStore()?.extra?.[LC_CHILD_KEY] as RunnableConfigLike | undefined;
}

/** The ids of the run the calling code belongs to, when it runs inside a graph. */
function runFields(): Record<string, unknown> {
  const config = runnableConfig();
  if (!config) return {};
  const fields: Record<string, unknown> = {};
  for (const key of ["run_id", "thread_id", "graph_id", "assistant_id"]) {
    const value = config.configurable?.[key] ?? config.metadata?.[key];
    if (value !== undefined && value !== null) fields[key] = value;
  }
  if (config.metadata?.langgraph_node !== undefined) fields.langgraph_node = config.metadata.langgraph_node;
  return fields;
}

function pinoLevel(level: string | undefined): string {
  const name = level?.trim().toLowerCase();
  if (!name) return "info";
  if (name in LEVELS) return LEVELS[name as WinstonLevel];
  return ["fatal", "trace", "silent"].includes(name) ? name : "info";
}
