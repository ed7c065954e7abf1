import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dataDirHolder, loadSecretsKey, lockDataDir, resolveControlPlaneConfig } from "./controlplane.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "slipway-config-"));

describe("control-plane config", () => {
  it("takes flags over environment over defaults", () => {
    const defaults = resolveControlPlaneConfig({}, {});
    expect(defaults).toMatchObject({ host: "127.0.0.1", port: 8080, region: "us", schema: "control", databaseUrl: undefined, bearer: undefined });
    expect(defaults.pgliteDir).toBe(join(defaults.dataDir, "control-db"));
    const env = { SLIPWAY_PORT: "9000", SLIPWAY_REGION: "eu", SLIPWAY_DATABASE_URL: "postgres://db/x", SLIPWAY_CONTROL_SCHEMA: "cp" };
    expect(resolveControlPlaneConfig({}, env)).toMatchObject({ port: 9000, region: "eu", databaseUrl: "postgres://db/x", schema: "cp" });
    expect(resolveControlPlaneConfig({ port: "0", region: "us" }, env)).toMatchObject({ port: 0, region: "us" });
  });

  it("refuses bad values with a message naming the flag", () => {
    expect(() => resolveControlPlaneConfig({ region: "asia" }, {})).toThrow(/--region/);
    expect(() => resolveControlPlaneConfig({ port: "http" }, {})).toThrow(/--port/);
    expect(() => resolveControlPlaneConfig({ databaseUrl: "mysql://x" }, {})).toThrow(/--database-url/);
    expect(() => resolveControlPlaneConfig({}, { SLIPWAY_CONTROL_SCHEMA: "Bad-Name" })).toThrow(/schema/);
  });

  it("reads bearer settings from the environment", () => {
    const config = resolveControlPlaneConfig({}, { SLIPWAY_JWT_ISSUER: "https://idp/", SLIPWAY_JWT_JWKS_URL: "https://idp/jwks" });
    expect(config.bearer).toEqual({ issuer: "https://idp/", audience: "slipway", jwksUrl: "https://idp/jwks", jwksFile: undefined, secret: undefined });
  });

  it("creates secrets.key once with mode 0600, then reuses it; the environment wins", () => {
    const dir = tmp();
    const first = loadSecretsKey(dir, {});
    expect(first.source).toBe("generated");
    expect(statSync(join(dir, "secrets.key")).mode & 0o777).toBe(0o600);
    const second = loadSecretsKey(dir, {});
    expect(second.source).toBe("file");
    expect(second.key.equals(first.key)).toBe(true);
    const fromEnv = loadSecretsKey(dir, { SLIPWAY_SECRETS_KEY: "ab".repeat(32) });
    expect(fromEnv).toMatchObject({ source: "env" });
    expect(fromEnv.key.equals(Buffer.alloc(32, 0xab))).toBe(true);
    expect(() => loadSecretsKey(dir, { SLIPWAY_SECRETS_KEY: "short" })).toThrow(/32 bytes/);
  });

  it("locks a data directory against a second live process", () => {
    const dir = tmp();
    const release = lockDataDir(dir);
    expect(dataDirHolder(dir)).toBeUndefined(); // our own pid
    writeFileSync(join(dir, "control.pid"), `${process.ppid}\n`);
    expect(dataDirHolder(dir)).toBe(process.ppid);
    expect(() => lockDataDir(dir)).toThrow(/in use by another Slipway process/);
    writeFileSync(join(dir, "control.pid"), "999999999\n");
    expect(dataDirHolder(dir)).toBeUndefined(); // stale
    release();
  });
});
