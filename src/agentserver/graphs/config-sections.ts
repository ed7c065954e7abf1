import { resolve } from "node:path";
import { MAX_DURATION_SECONDS } from "../../http/bounds.ts";

/**
 * The sections of langgraph.json beside `graphs`, `env` and `http`: `auth`, `ui`,
 * `ui_config`, `store` and `checkpointer`, read into the shapes the server uses. Each
 * mistake throws a message naming the key (the caller adds the file).
 */

/** `"./src/auth.ts:auth"`: a module of the project and one of its exports. */
export interface ModuleRef {
  /** The key that named it, for messages (`auth.path`, `http.app`, ...). */
  key: string;
  /** Absolute path of the module. */
  file: string;
  exportName: string;
}

export interface AuthSection {
  module: ModuleRef;
  /** A `.py` module holds a `langgraph_sdk.Auth`, run by the Python worker; anything else is a JS module. */
  language: "js" | "python";
  /** `disable_studio_auth`: no request is taken for LangGraph Studio's, whatever it carries. */
  disableStudioAuth: boolean;
}

export interface UiSection {
  /** Graph id (the agent a component belongs to) to the absolute path of its components file. */
  components: Record<string, string>;
  /** `ui_config.shared`: packages the browser provides, left out of the bundles. */
  shared: string[];
}

export interface StoreIndexSection {
  dims: number;
  /** `"openai:text-embedding-3-small"`, or a module of the project exporting embeddings. */
  embed: { provider: string; model: string } | { module: ModuleRef };
  /** Paths of the value to embed; `["$"]` (default) is the whole value. */
  fields: string[];
}

export interface StoreTtlSection {
  defaultTtl?: number;
  refreshOnRead?: boolean;
  sweepIntervalMinutes?: number;
}

export interface CheckpointerTtlSection {
  /** What expiry does to a thread: the vendor's `delete`, or our `keep_latest`. */
  strategy: "delete" | "keep_latest";
  /** Minutes a new thread lives after its last activity. */
  defaultTtl?: number;
  sweepIntervalMinutes?: number;
  /** Threads one sweep handles at most (default 1000). */
  sweepLimit?: number;
}

export class SectionError extends Error {}

const fail = (key: string, why: string): never => {
  throw new SectionError(`${key}: ${why}`);
};

type Obj = Record<string, unknown>;

function objectAt(value: unknown, key: string): Obj | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) fail(key, "must be an object");
  return value as Obj;
}

function onlyKeys(value: Obj, key: string, known: string[]): void {
  for (const name of Object.keys(value)) if (!known.includes(name)) fail(`${key}.${name}`, `unknown setting (known: ${known.join(", ")})`);
}

function stringList(value: unknown, key: string): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) fail(key, "must be a list of strings");
  return value as string[];
}

/** A positive number of minutes, fractions allowed (tests and short-lived data use them). */
function minutes(value: unknown, key: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MAX_DURATION_SECONDS / 60) {
    fail(key, "must be a positive number of minutes");
  }
  return value as number;
}

/**
 * `"./path/to/file.ts:name"` (or without `:name`, the default export), relative to the
 * project's root, as graph paths are. A Windows drive letter is not a separator.
 */
export function moduleRef(value: unknown, key: string, root: string): ModuleRef {
  if (typeof value !== "string" || value.trim() === "") fail(key, 'must be "./path/to/file.ts:export"');
  const spec = value as string;
  const at = spec.lastIndexOf(":");
  const [path, exportName] = at > 1 ? [spec.slice(0, at), spec.slice(at + 1) || "default"] : [spec, "default"];
  return { key, file: resolve(root, path), exportName };
}

export function readAuth(raw: unknown, root: string): AuthSection | undefined {
  const auth = objectAt(raw, "auth");
  if (!auth) return undefined;
  // `openapi` only decorates the vendor's OpenAPI document; it changes no behaviour.
  onlyKeys(auth, "auth", ["path", "disable_studio_auth", "openapi"]);
  if (auth.disable_studio_auth !== undefined && typeof auth.disable_studio_auth !== "boolean") fail("auth.disable_studio_auth", "must be true or false");
  // Without a path there is no handler, and the vendor serves without custom auth too.
  if (auth.path === undefined || auth.path === null) return undefined;
  const module = moduleRef(auth.path, "auth.path", root);
  const language = module.file.endsWith(".py") ? "python" : "js";
  // A Python module has no default export: the vendor's `./auth.py:auth` names its attribute.
  if (language === "python" && module.exportName === "default") fail("auth.path", 'must name the Auth object of the Python module: "./auth.py:auth"');
  return { module, language, disableStudioAuth: auth.disable_studio_auth === true };
}

export function readUi(rawUi: unknown, rawConfig: unknown, root: string): UiSection | undefined {
  const ui = objectAt(rawUi, "ui");
  const config = objectAt(rawConfig, "ui_config");
  if (config) onlyKeys(config, "ui_config", ["shared"]);
  if (!ui || Object.keys(ui).length === 0) return undefined;
  const components: Record<string, string> = {};
  for (const [graphId, path] of Object.entries(ui)) {
    const ref = moduleRef(path, `ui.${graphId}`, root);
    if (ref.exportName !== "default") fail(`ui.${graphId}`, "names a file; its default export maps component names to components");
    components[graphId] = ref.file;
  }
  return { components, shared: config?.shared === undefined ? [] : stringList(config.shared, "ui_config.shared") };
}

export function readStore(raw: unknown, root: string): { index?: StoreIndexSection; ttl?: StoreTtlSection } {
  const store = objectAt(raw, "store");
  if (!store) return {};
  // `path` (a custom BaseStore) is a Python-only setting of the vendor's.
  onlyKeys(store, "store", ["index", "ttl"]);
  return { index: readIndex(store.index, root), ttl: readStoreTtl(store.ttl) };
}

function readIndex(raw: unknown, root: string): StoreIndexSection | undefined {
  const index = objectAt(raw, "store.index");
  if (!index) return undefined;
  onlyKeys(index, "store.index", ["dims", "embed", "fields"]);
  const dims = index.dims;
  // pgvector's own bound on a vector's dimensions.
  if (!Number.isInteger(dims) || (dims as number) < 1 || (dims as number) > 16_000) fail("store.index.dims", "must be a whole number from 1 to 16000");
  if (typeof index.embed !== "string" || index.embed.trim() === "") {
    fail("store.index.embed", 'must be "provider:model" (e.g. "openai:text-embedding-3-small") or "./path/to/embeddings.ts:export"');
  }
  const embed = index.embed as string;
  const fields = index.fields === undefined || index.fields === null ? ["$"] : stringList(index.fields, "store.index.fields");
  if (fields.length === 0) fail("store.index.fields", 'must name at least one path ("$" is the whole value)');
  return { dims: dims as number, embed: embedSpec(embed, root), fields };
}

/** A path (it starts with "." or "/", or names a file by its extension) or `provider:model`. */
function embedSpec(embed: string, root: string): StoreIndexSection["embed"] {
  const looksLikePath = /^[./]/.test(embed) || /\.(m|c)?(t|j)sx?(:|$)/.test(embed);
  if (looksLikePath) return { module: moduleRef(embed, "store.index.embed", root) };
  const colon = embed.indexOf(":");
  if (colon <= 0 || colon === embed.length - 1) fail("store.index.embed", `"${embed}": expected "provider:model" or a path to a module`);
  return { provider: embed.slice(0, colon), model: embed.slice(colon + 1) };
}

function readStoreTtl(raw: unknown): StoreTtlSection | undefined {
  const ttl = objectAt(raw, "store.ttl");
  if (!ttl) return undefined;
  onlyKeys(ttl, "store.ttl", ["default_ttl", "refresh_on_read", "sweep_interval_minutes"]);
  if (ttl.refresh_on_read !== undefined && typeof ttl.refresh_on_read !== "boolean") fail("store.ttl.refresh_on_read", "must be true or false");
  return {
    defaultTtl: minutes(ttl.default_ttl, "store.ttl.default_ttl"),
    refreshOnRead: ttl.refresh_on_read as boolean | undefined,
    sweepIntervalMinutes: minutes(ttl.sweep_interval_minutes, "store.ttl.sweep_interval_minutes"),
  };
}

export function readCheckpointer(raw: unknown): { ttl?: CheckpointerTtlSection } {
  const checkpointer = objectAt(raw, "checkpointer");
  if (!checkpointer) return {};
  // `path` (a custom saver) and `serde` are Python-only settings of the vendor's.
  onlyKeys(checkpointer, "checkpointer", ["ttl"]);
  const ttl = objectAt(checkpointer.ttl, "checkpointer.ttl");
  if (!ttl) return {};
  onlyKeys(ttl, "checkpointer.ttl", ["strategy", "default_ttl", "sweep_interval_minutes", "sweep_limit"]);
  const strategy = ttl.strategy ?? "delete";
  if (strategy !== "delete" && strategy !== "keep_latest") fail("checkpointer.ttl.strategy", 'must be "delete" or "keep_latest"');
  const limit = ttl.sweep_limit;
  if (limit !== undefined && limit !== null && !(Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= 100_000)) {
    fail("checkpointer.ttl.sweep_limit", "must be a whole number from 1 to 100000");
  }
  if (ttl.strategy !== undefined && ttl.default_ttl === undefined) {
    fail("checkpointer.ttl.strategy", "is the strategy of default_ttl; set default_ttl too (a thread's own ttl names its own strategy)");
  }
  return {
    ttl: {
      strategy: strategy as CheckpointerTtlSection["strategy"],
      defaultTtl: minutes(ttl.default_ttl, "checkpointer.ttl.default_ttl"),
      sweepIntervalMinutes: minutes(ttl.sweep_interval_minutes, "checkpointer.ttl.sweep_interval_minutes"),
      sweepLimit: (limit as number | null | undefined) ?? undefined,
    },
  };
}
