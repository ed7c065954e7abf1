import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Named connection profiles, written by `slipway login`. Two files, as the AWS CLI keeps
 * them: `config.json` (address and workspace: harmless to show) and `credentials.json`
 * (the API keys), which only its owner may read (mode 0600, in a 0700 folder).
 */
interface Profile {
  url?: string;
  tenantId?: string;
  apiKey?: string;
}

interface Files {
  config: { profiles: Record<string, { url?: string; tenant_id?: string }> };
  credentials: { profiles: Record<string, { api_key?: string }> };
}

/** SLIPWAY_CONFIG_DIR, else $XDG_CONFIG_HOME/slipway, else ~/.config/slipway. */
function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SLIPWAY_CONFIG_DIR || join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "slipway");
}

export function readProfile(name: string, env: NodeJS.ProcessEnv = process.env, warn: (text: string) => void = () => undefined): Profile | undefined {
  const dir = configDir(env);
  const config = readJson<Files["config"]>(join(dir, "config.json"))?.profiles?.[name];
  const credentialsFile = join(dir, "credentials.json");
  const credentials = readJson<Files["credentials"]>(credentialsFile)?.profiles?.[name];
  if (credentials?.api_key && (statSync(credentialsFile).mode & 0o077) !== 0) {
    warn(`${credentialsFile} can be read by other users: run chmod 600 ${credentialsFile}`);
  }
  if (!config && !credentials) return undefined;
  return { url: config?.url, tenantId: config?.tenant_id, apiKey: credentials?.api_key };
}

/** Saves a profile (fields left undefined are removed); returns the two files' paths. */
export function writeProfile(name: string, profile: Profile, env: NodeJS.ProcessEnv = process.env): { config: string; credentials: string } {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const configFile = join(dir, "config.json");
  const credentialsFile = join(dir, "credentials.json");
  const config = readJson<Files["config"]>(configFile) ?? { profiles: {} };
  const credentials = readJson<Files["credentials"]>(credentialsFile) ?? { profiles: {} };
  config.profiles = { ...config.profiles, [name]: { url: profile.url, tenant_id: profile.tenantId } };
  credentials.profiles = { ...credentials.profiles, [name]: { api_key: profile.apiKey } };
  writeAtomically(configFile, config, 0o644);
  writeAtomically(credentialsFile, credentials, 0o600);
  return { config: configFile, credentials: credentialsFile };
}

function readJson<T>(file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch (error) {
    throw new Error(`${file} is not valid JSON (${(error as Error).message}): fix or remove it`);
  }
}

/** The new content never exists with looser permissions, not even for a moment. */
function writeAtomically(file: string, value: unknown, mode: number): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode });
  chmodSync(temporary, mode);
  renameSync(temporary, file);
}
