import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { FIXTURE_CONFIG, startTestAgentServer } from "../support/agent-server.ts";

// `GET /ok?check_db=1` asks the database; plain `/ok` does not.
describe("GET /ok?check_db", () => {
  it("answers 200 when the embedded database answers, and 422 for a value other than 0 or 1", async () => {
    const t = await startTestAgentServer("pglite");
    try {
      const checked = await fetch(`${t.url}/ok?check_db=1`);
      expect(checked.status).toBe(200);
      expect(await checked.json()).toEqual({ ok: true });
      const bad = await fetch(`${t.url}/ok?check_db=2`);
      expect(bad.status).toBe(422);
      expect(JSON.stringify(await bad.json())).toContain("check_db");
    } finally {
      await t.close();
    }
  });

  describe("on a PostgreSQL server that stops taking the server's role", () => {
    const admin = new pg.Client({ connectionString: inject("databaseUrl") });
    const role = `okcheck_${randomBytes(5).toString("hex")}`;
    let server: RunningAgentServer | undefined;

    afterAll(async () => {
      await server?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${role} CASCADE`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    });

    it("answers 500 naming the database while plain /ok stays 200, and 200 again once it is back", async () => {
      await admin.connect();
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${role}'`);
      await admin.query(`CREATE SCHEMA ${role} AUTHORIZATION ${role}`);
      const url = new URL(inject("databaseUrl"));
      url.username = role;
      url.password = role;
      server = await startAgentServer({
        configPath: FIXTURE_CONFIG,
        port: 0,
        host: "127.0.0.1",
        databaseUrl: url.toString(),
        schema: role,
        workers: 2,
        logLevel: "silent",
      });
      expect((await fetch(`${server.url}/ok?check_db=1`)).status).toBe(200);

      await admin.query(`ALTER ROLE ${role} NOLOGIN`);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", [role]);
      const down = await fetch(`${server.url}/ok?check_db=1`);
      expect(down.status).toBe(500);
      expect((await down.json()).detail).toMatch(/^database unreachable: /);
      expect((await fetch(`${server.url}/ok`)).status).toBe(200);
      expect((await fetch(`${server.url}/ok?check_db=0`)).status).toBe(200);

      await admin.query(`ALTER ROLE ${role} LOGIN`);
      await expect.poll(async () => (await fetch(`${server?.url}/ok?check_db=1`)).status).toBe(200);
    });
  });
});
