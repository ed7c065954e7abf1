import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { freshBackend } from "../support/backends.ts";

/** The real CLI, as child processes: `admin bootstrap` and `up`. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SLOW = 240_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const name of ["SLIPWAY_DATA_DIR", "SLIPWAY_DATABASE_URL", "SLIPWAY_SECRETS_KEY", "SLIPWAY_PORT", "SLIPWAY_JWT_ISSUER"]) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

function slipway(args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/slipway.js", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const running: ChildProcess[] = [];

/** Starts `slipway up` and resolves once it prints its listening line. */
function startUp(args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Promise<{ child: ChildProcess; output: () => string; url: string }> {
  const child = spawn(process.execPath, ["bin/slipway.js", "up", "--port", "0", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  running.push(child);
  let stdout = "";
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    child.stdout!.on("data", (chunk) => {
      stdout += chunk;
      const match = /listening on (http:\/\/[^\s]+)/.exec(stdout) ?? /"event":"listening","url":"([^"]+)"/.exec(stdout);
      if (match) resolve({ child, output: () => stdout, url: match[1] });
    });
    child.on("close", (code) => reject(new Error(`slipway up exited with ${code}\n${stdout}\n${stderr}`)));
  });
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const code = await closed;
  clearTimeout(timer);
  return code;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map(stop));
});

const integrations = (url: string, headers: Record<string, string>) => fetch(`${url}/v1/integrations/github/install`, { headers });

describe("slipway CLI on the embedded database", () => {
  it(
    "admin bootstrap prints the organization, workspace and key as JSON; up serves them",
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "slipway-cli-"));
      const run = await slipway(["admin", "bootstrap", "--data-dir", dataDir, "--org-name", "Acme", "--plan", "plus", "--json"]);
      expect(run.code, run.stderr).toBe(0);
      const printed = JSON.parse(run.stdout.trim());
      expect(Object.keys(printed).sort()).toEqual(["api_key", "organization_id", "workspace_id"]);
      expect(printed.organization_id).toMatch(UUID);
      expect(printed.workspace_id).toMatch(UUID);
      expect(printed.api_key).toMatch(/^slw_/);

      const refused = await slipway(["admin", "bootstrap", "--data-dir", dataDir, "--plan", "gold", "--json"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/unknown plan 'gold'/);
      expect(refused.stdout).toBe("");

      // The database already has an organization: up creates no default one and prints no key.
      const server = await startUp(["--data-dir", dataDir]);
      expect(server.output()).not.toMatch(/api_key/);
      const ok = await integrations(server.url, { "X-Api-Key": printed.api_key, "X-Tenant-Id": printed.workspace_id });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual([]);
      expect(await stop(server.child)).toBe(0);
    },
    SLOW,
  );

  it(
    "up bootstraps an empty installation once, and its printed key works (header names in any case)",
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "slipway-up-"));
      const server = await startUp(["--data-dir", dataDir, "--host", "127.0.0.1"]);
      const text = server.output();
      const workspaceId = /workspace_id:\s+([0-9a-f-]{36})/.exec(text)?.[1];
      const apiKey = /api_key:\s+(slw_\S+)/.exec(text)?.[1];
      expect(workspaceId).toMatch(UUID);
      expect(apiKey).toBeDefined();
      expect((statSync(join(dataDir, "secrets.key")).mode & 0o777).toString(8)).toBe("600");

      const ok = await integrations(server.url, { "X-API-KEY": apiKey!, "x-tenant-ID": workspaceId! });
      expect(ok.status).toBe(200);
      const mirrored = await fetch(`${server.url}/api-host/v1/integrations/github/install`, { headers: { "x-api-key": apiKey!, "x-tenant-id": workspaceId! } });
      expect(mirrored.status).toBe(200);
      const noTenant = await integrations(server.url, { "x-api-key": apiKey! });
      expect(noTenant.status).toBe(403);
      expect((await noTenant.json()).detail).toMatch(/requires workspace specification/);
      expect((await integrations(server.url, {})).status).toBe(401);
      expect((await fetch(`${server.url}/ok`)).status).toBe(200);
      expect((await (await fetch(`${server.url}/openapi.json`)).json()).info.version).toBe("0.1.0");

      // One process per embedded data directory: admin refuses while up holds it.
      const beside = await slipway(["admin", "bootstrap", "--data-dir", dataDir, "--json"]);
      expect(beside.code).toBe(1);
      expect(beside.stderr).toMatch(/in use by another Slipway process/);

      expect(await stop(server.child)).toBe(0);
      const again = await startUp(["--data-dir", dataDir]);
      expect(again.output()).not.toMatch(/api_key/);
      expect((await integrations(again.url, { "x-api-key": apiKey!, "x-tenant-id": workspaceId! })).status).toBe(200);
    },
    SLOW,
  );
});

describe("slipway CLI on PostgreSQL", () => {
  it(
    "admin bootstrap may run beside a running up, whose default key and the new key both work",
    async () => {
      const target = freshBackend("postgres", "cli");
      const env = cleanEnv({ SLIPWAY_CONTROL_SCHEMA: target.schema, SLIPWAY_SECRETS_KEY: randomBytes(32).toString("hex") });
      const dataDir = mkdtempSync(join(tmpdir(), "slipway-pg-"));
      const server = await startUp(["--database-url", target.databaseUrl!, "--data-dir", dataDir, "--json"], env);
      const events = server
        .output()
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      const boot = events.find((e) => e.event === "bootstrap");
      expect(boot.workspace_id).toMatch(UUID);
      expect(events.at(-1)).toMatchObject({ event: "listening", storage: "postgres" });

      const run = await slipway(["admin", "bootstrap", "--database-url", target.databaseUrl!, "--org-name", "Second", "--json"], env);
      expect(run.code, run.stderr).toBe(0);
      const second = JSON.parse(run.stdout);
      for (const [key, workspace] of [
        [boot.api_key, boot.workspace_id],
        [second.api_key, second.workspace_id],
      ]) {
        expect((await integrations(server.url, { "x-api-key": key, "x-tenant-id": workspace })).status).toBe(200);
      }
      // Two organizations: neither key reaches the other's workspace.
      expect((await integrations(server.url, { "x-api-key": second.api_key, "x-tenant-id": boot.workspace_id })).status).toBe(403);
      expect(await stop(server.child)).toBe(0);
    },
    SLOW,
  );
});
