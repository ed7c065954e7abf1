import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import { create } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { freePort } from "../support/ports.ts";
import { alive, startedPids } from "./agent-pids.ts";
import { api, type Api } from "./api.ts";
import { startPipelineControlPlane } from "./control-plane.ts";
import { writeSampleProject } from "./sample-project.ts";

/**
 * Idle deployments sleep (docs/decisions/0039): one deployment, set to sleep after 2
 * "minutes" of a control plane whose minute lasts 1 s (SLIPWAY_SLEEP_MINUTE_MS, for
 * tests), on the embedded database. It falls asleep, stays asleep through a restart of
 * the control plane, wakes for a run queued through its API (the request is held, then
 * answered), and for a cron and a delayed run due while it sleeps (the control plane
 * wakes it on its own); then it is deleted while asleep.
 */
const SLOW = 300_000;
const BIN = fileURLToPath(new URL("../../bin/slipway.js", import.meta.url));

describe("a deployment that sleeps when idle", () => {
  let root: string;
  let port: number;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  let apiKey: string;
  let workspaceId: string;
  const schema = `cp_${Math.random().toString(36).slice(2, 10)}`;
  // The same port and schema each time: the restart finds the deployment where it was.
  const start = () =>
    startPipelineControlPlane(root, {
      args: ["--port", String(port)],
      env: { SLIPWAY_CONTROL_SCHEMA: schema, SLIPWAY_SLEEP_MINUTE_MS: "1000", SLIPWAY_STOP_GRACE_SECONDS: "4", SLIPWAY_DRAIN_TIMEOUT_SECONDS: "2" },
    });

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-sleep-"));
    port = await freePort();
    cp = await start();
    apiKey = cp.apiKey!;
    workspaceId = cp.workspaceId!;
    cpApi = api(cp);
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    rmSync(root, { recursive: true, force: true });
  });

  const record = async (id: string) => (await cpApi.call("GET", `/v2/deployments/${id}`)).body;

  async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 90_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  const asleep = (id: string) => until("it sleeps", async () => ((await record(id)).slipway_sleeping ? true : undefined));

  async function deployLog(id: string, revisionId: string): Promise<string> {
    return (await cpApi.logs(id, revisionId, "deploy")).join("\n");
  }

  it("refuses a sleep setting that is not a whole number of minutes from 0 to 43200, and changes nothing", async () => {
    const body = (minutes: unknown) => ({
      name: `refused-${String(minutes)}`,
      source: "internal_source",
      source_config: { deployment_type: "dev" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      slipway_sleep_after_minutes: minutes,
    });
    for (const minutes of [-1, 1.5, "5", 43_201]) {
      const refused = await cpApi.call("POST", "/v2/deployments", body(minutes));
      expect(refused.status).toBe(422);
      expect(refused.body.detail[0].loc).toEqual(["body", "slipway_sleep_after_minutes"]);
    }
    expect((await cpApi.call("GET", "/v2/deployments")).body.resources).toEqual([]);
  });

  it(
    "sleeps when idle, keeps its revision DEPLOYED, stays asleep through a restart, wakes for a queued run, a cron and a delayed run; deleted while asleep",
    async () => {
      const created = await cpApi.call("POST", "/v2/deployments", {
        name: "sleepy",
        source: "internal_source",
        source_config: { deployment_type: "dev" },
        source_revision_config: { langgraph_config_path: "langgraph.json" },
        slipway_sleep_after_minutes: 30,
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ slipway_sleep_after_minutes: 30, slipway_sleeping: false, slipway_sleeping_since: null });
      const id = created.body.id;
      // A bad PATCH changes nothing; a good one changes the setting and makes no revision.
      const refused = await cpApi.call("PATCH", `/v2/deployments/${id}`, { slipway_sleep_after_minutes: -3 });
      expect(refused.status).toBe(422);
      expect(refused.body.detail[0].loc).toEqual(["body", "slipway_sleep_after_minutes"]);
      expect((await record(id)).slipway_sleep_after_minutes).toBe(30);

      const project = join(root, "project");
      writeSampleProject(project, "v1");
      const tarball = join(root, "project.tar.gz");
      await create({ gzip: true, file: tarball, cwd: project, portable: true }, ["."]);
      const url = await cpApi.call("POST", `/v2/deployments/${id}/upload-url`);
      expect((await fetch(url.body.upload_url, { method: "PUT", body: readFileSync(tarball), headers: { "content-type": "application/gzip" } })).status).toBe(
        200,
      );
      const deployed = await cpApi.call("PATCH", `/v2/deployments/${id}`, { source_revision_config: { source_tarball_path: url.body.object_path } });
      const revisionId = deployed.body.latest_revision_id;
      expect((await cpApi.waitForRevision(id, revisionId)).status).toBe("DEPLOYED");
      const client = new Client({ apiUrl: created.body.url, apiKey });
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "one" }] } });
      expect((await record(id)).slipway_sleeping).toBe(false);

      const patched = await cpApi.call("PATCH", `/v2/deployments/${id}`, { slipway_sleep_after_minutes: 2 });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ slipway_sleep_after_minutes: 2, latest_revision_id: revisionId });

      // Asleep: its processes are gone, its revision stays DEPLOYED, the CLI says so.
      await asleep(id);
      const pids = startedPids(await deployLog(id, revisionId));
      expect(pids.length).toBe(1);
      expect(pids.filter(alive)).toEqual([]);
      const sleeping = await record(id);
      expect(sleeping).toMatchObject({ status: "READY", active_revision_id: revisionId, slipway_sleeping: true });
      expect(Date.parse(sleeping.slipway_sleeping_since)).toBeGreaterThan(0);
      expect((await cpApi.call("GET", `/v2/deployments/${id}/revisions/${revisionId}`)).body.status).toBe("DEPLOYED");
      const cli = await promisify(execFile)(process.execPath, [
        BIN,
        "deployments",
        "get",
        id,
        "--url",
        cp.url,
        "--api-key",
        apiKey,
        "--tenant-id",
        workspaceId,
      ]);
      expect(cli.stdout).toMatch(/sleep:\s+sleeping since/);
      const listed = await promisify(execFile)(process.execPath, [
        BIN,
        "deployments",
        "list",
        "--url",
        cp.url,
        "--api-key",
        apiKey,
        "--tenant-id",
        workspaceId,
      ]);
      expect(listed.stdout).toMatch(/READY \(sleeping\)/);

      // The control plane restarts while it sleeps: it stays asleep, no process starts.
      const startsBefore = startedPids(await deployLog(id, revisionId)).length;
      await cp.kill("SIGTERM");
      cp = await start();
      cpApi = api({ ...cp, apiKey, workspaceId });
      expect((await record(id)).slipway_sleeping).toBe(true);
      expect(startedPids(await deployLog(id, revisionId)).length).toBe(startsBefore);

      // A run queued through its API wakes it: the request is held while it starts, then answered.
      const queuedAt = Date.now();
      const run = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "two" }] } });
      console.log(`sleep.test: a run queued while asleep was answered ${Date.now() - queuedAt} ms after it was sent`);
      await client.runs.join(thread.thread_id, run.run_id);
      expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
      expect((await record(id)).slipway_sleeping).toBe(false);
      expect(await deployLog(id, revisionId)).toMatch(/Waking \(a request arrived\)/);

      // A cron and a delayed run due in about 15 s: it sleeps anyway (nothing due within a minute
      // of 1 s) and the control plane wakes it for them, with no request.
      const dueAt = new Date(Date.now() + 15_000);
      const cron = await client.crons.createForThread(thread.thread_id, "agent", {
        schedule: `* * * * * ${dueAt.getUTCSeconds()}`,
        input: { messages: [{ role: "human", content: "from the cron" }] },
      });
      const other = await client.threads.create();
      const delayed = await client.runs.create(other.thread_id, "agent", { input: { messages: [{ role: "human", content: "delayed" }] }, afterSeconds: 15 });
      await asleep(id);
      await until("the control plane wakes it for its scheduled work", async () =>
        /Waking \(a cron or a delayed run is due\)/.test(await deployLog(id, revisionId)),
      );
      await until("the cron has fired and both runs ended", async () => {
        const runs = [...(await client.runs.list(thread.thread_id)), ...(await client.runs.list(other.thread_id))];
        return runs.length === 4 && runs.every((r) => r.status === "success");
      });
      await client.crons.delete(cron.cron_id);
      expect((await client.runs.get(other.thread_id, delayed.run_id)).status).toBe("success");

      const state = await client.threads.getState<{ messages: { content: string }[] }>(thread.thread_id);
      expect(state.values.messages.map((m) => m.content)).toEqual(["one", "You said: one", "two", "You said: two", "from the cron", "You said: from the cron"]);

      // Deleted while asleep: gone, with its data, and nothing started.
      await asleep(id);
      const startsAsleep = startedPids(await deployLog(id, revisionId));
      expect((await cpApi.call("DELETE", `/v2/deployments/${id}`)).status).toBe(204);
      await until("the deployment is gone", async () => (await cpApi.call("GET", `/v2/deployments/${id}`)).status === 404);
      expect(startsAsleep.filter(alive)).toEqual([]);
      expect(existsSync(join(root, "cp", "deployments", id))).toBe(false);
      expect((await fetch(`${created.body.url}/ok`, { headers: { "x-api-key": apiKey } })).status).toBe(404);
    },
    SLOW,
  );
});
