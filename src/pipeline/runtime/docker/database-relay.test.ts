import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { DatabaseRelay, localServer } from "./database-relay.ts";

/**
 * The Docker runtime's database socket, against the suite's real PostgreSQL server (which
 * trusts loopback: exactly what a container must not get at through it).
 */
describe("a deployment's database relay", () => {
  let dir: string;
  let relay: DatabaseRelay;
  let serverUrl: URL;

  beforeAll(async () => {
    serverUrl = new URL(inject("databaseUrl"));
    dir = mkdtempSync(join(tmpdir(), "slipway-relay-"));
    // The suite's own user stands for the deployment's role.
    relay = await DatabaseRelay.open(
      dir,
      { host: serverUrl.hostname, port: Number(serverUrl.port || 5432) },
      [decodeURIComponent(serverUrl.username)],
      undefined,
    );
  });

  afterAll(async () => {
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves a Unix socket that only its owner may open, and carries the role's sessions to the server", async () => {
    expect(statSync(relay.socketPath).mode & 0o777).toBe(0o600);
    const url = relay.url(serverUrl.toString());
    expect(new URL(url).searchParams.get("host")).toBe(dir);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT current_user AS who");
      expect(rows[0].who).toBe(decodeURIComponent(serverUrl.username));
    } finally {
      await client.end();
    }
  });

  it("refuses a session as any other role, with the server's kind of error, before the server sees it", async () => {
    const other = new URL(relay.url(serverUrl.toString()));
    other.username = "slipway_someone_else";
    const client = new pg.Client({ connectionString: other.toString() });
    const failure = await client.connect().then(
      () => undefined,
      (error: Error & { code?: string }) => error,
    );
    await client.end().catch(() => undefined);
    expect({ code: failure?.code, message: failure?.message }).toEqual({
      code: "28000",
      message: `this deployment's database socket logs in as its own role only, not as "slipway_someone_else"`,
    });
  });
});

describe("which database servers a container needs the relay for", () => {
  it("is those on this machine only: loopback or a Unix socket; a server elsewhere is reached directly", () => {
    expect(localServer("postgres://u:p@127.0.0.1:44541/db")).toEqual({ host: "127.0.0.1", port: 44541 });
    expect(localServer("postgres://u:p@[::1]/db")).toEqual({ host: "::1", port: 5432 });
    expect(localServer("postgres://u@localhost:6000/db")).toEqual({ host: "localhost", port: 6000 });
    expect(localServer("postgres:///db?host=/run/pg&port=5433")).toEqual({ path: "/run/pg/.s.PGSQL.5433", port: 5433 });
    expect(localServer("postgres://u:p@db.internal:5432/db")).toBeUndefined();
  });
});
