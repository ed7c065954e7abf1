import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveConnection } from "./connection.ts";
import { UsageError } from "./exit.ts";
import { readProfile, writeProfile } from "./profiles.ts";

/** Profiles as `slipway login` writes them, and which setting wins when several are given. */
describe("profiles and connection settings", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "slipway-profiles-"));
    env = { SLIPWAY_CONFIG_DIR: join(dir, "conf") };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the key in a file only its owner can read, apart from the address", () => {
    const files = writeProfile("default", { url: "http://cp:8080", apiKey: "slw_0123456789abcdef-secret", tenantId: "ws-1" }, env);
    expect(statSync(files.credentials).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "conf")).mode & 0o777).toBe(0o700);
    expect(readFileSync(files.config, "utf8")).not.toContain("secret");
    expect(readProfile("default", env)).toEqual({ url: "http://cp:8080", apiKey: "slw_0123456789abcdef-secret", tenantId: "ws-1" });
    // A second profile leaves the first alone.
    writeProfile("staging", { url: "http://staging:8080", apiKey: "slw_k2" }, env);
    expect(readProfile("default", env)?.apiKey).toBe("slw_0123456789abcdef-secret");
    expect(readProfile("staging", env)).toEqual({ url: "http://staging:8080", apiKey: "slw_k2", tenantId: undefined });
  });

  it("warns when the key file became readable by others", () => {
    const files = writeProfile("default", { apiKey: "slw_k" }, env);
    chmodSync(files.credentials, 0o644);
    const warnings: string[] = [];
    readProfile("default", env, (text) => warnings.push(text));
    expect(warnings).toEqual([expect.stringContaining("chmod 600")]);
  });

  it("takes each setting from its flag, else the environment, else the profile, and says where from", () => {
    writeProfile("default", { url: "http://profile:1", apiKey: "slw_profile", tenantId: "ws-profile" }, env);
    const connection = resolveConnection({ url: "http://flag:2" }, { ...env, SLIPWAY_API_KEY: "slw_env" });
    expect(connection).toMatchObject({ url: "http://flag:2", apiKey: "slw_env", tenantId: "ws-profile" });
    expect(connection.from).toEqual({ url: "--url", apiKey: "SLIPWAY_API_KEY", tenantId: "profile 'default'" });
    expect(resolveConnection({}, { SLIPWAY_CONFIG_DIR: join(dir, "empty") })).toMatchObject({ url: "http://127.0.0.1:8080", apiKey: undefined });
  });

  it("refuses a named profile that does not exist, and an address that is not http(s)", () => {
    expect(() => resolveConnection({ profile: "prod" }, env)).toThrow(UsageError);
    expect(() => resolveConnection({ profile: "prod" }, env)).toThrow(/ login --profile prod/);
    expect(() => resolveConnection({ url: "cp:8080" }, env)).toThrow(/--url must be an http/);
  });
});
