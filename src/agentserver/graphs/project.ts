import { readAssistantDefaults, type AssistantDefaults } from "./env-config.ts";
import { readLanggraphConfig, type LanggraphConfig } from "./langgraph-config.ts";
import { registerSdkLogger } from "./sdk-logger.ts";

export interface PreparedProject {
  config: LanggraphConfig;
  /** LANGGRAPH_CONFIG: the config and context of the system assistants to create. */
  assistantDefaults: Map<string, AssistantDefaults>;
}

/**
 * Everything a start does before it loads graphs, shared by `slipway agent` and
 * `slipway agent --check` so that a check refuses exactly what a start refuses:
 * langgraph.json (with node_version), the project's env, LANGGRAPH_CONFIG, and the
 * logger `getLogger()` returns (graphs may ask for it while they are imported).
 * What it goes on without is in `config.warnings`, for the caller to tell.
 */
export function prepareProject(configPath: string, options: { logFd?: number } = {}): PreparedProject {
  const config = readLanggraphConfig(configPath);
  // The project's env applies where the deployment did not set a value itself.
  // The deployment's own environment (its secrets) wins over both forms of `env`.
  for (const [key, value] of Object.entries(config.env)) if (process.env[key] === undefined) process.env[key] = value;
  const assistantDefaults = readAssistantDefaults(process.env.LANGGRAPH_CONFIG, Object.keys(config.graphs));
  registerSdkLogger({ fd: options.logFd });
  return { config, assistantDefaults };
}
