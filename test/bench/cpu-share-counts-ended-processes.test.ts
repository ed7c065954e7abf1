import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { cpuPerRun, cpuSample } from "../../bench/agent/cpu-share.ts";
import { renderCpu, type Column } from "../../bench/agent/report.ts";
import type { WorkloadResult } from "../../bench/agent/workload.ts";

/**
 * The bench's CPU accounting: the CPU of a process that ended during the
 * phase (a PostgreSQL backend whose connection closed, a server's child process) is
 * still the tree's, and a phase too short for the machine to count renders no Infinity.
 */
describe("CPU of processes that ended during the phase (bench/agent/cpu-share.ts)", () => {
  it("counts a server's child process that spun and exited between the readings", async () => {
    // The "server" runs a child that spins 600 ms and exits (reaped by spawnSync), then waits.
    const script = `
      const { spawnSync } = require("node:child_process");
      process.stdin.once("data", () => {
        spawnSync(process.execPath, ["-e", "const end = Date.now() + 600; while (Date.now() < end);"]);
        console.log("spun");
        setTimeout(() => {}, 30000);
      });`;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      await once(child, "spawn");
      const before = cpuSample(child.pid, undefined);
      expect(before).toBeDefined();
      child.stdin!.write("go\n");
      await Promise.race([once(child.stdout!, "data"), once(child, "exit")]);
      const after = cpuSample(child.pid, undefined)!;
      // 600 ms of wall time spinning: at least a quarter of it on a CPU, even on a busy machine.
      expect(cpuPerRun(before!, after, 1).serverOtherMs).toBeGreaterThanOrEqual(150);
    } finally {
      child.kill();
    }
  });

  it("counts a PostgreSQL backend whose connection closed during the phase", async () => {
    const connect = async () => {
      const client = new pg.Client({ connectionString: process.env.SLIPWAY_TEST_DATABASE_URL });
      await client.connect();
      return client;
    };
    const watcher = await connect();
    try {
      const [{ pid }] = (await watcher.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows;
      // A backend's parent is the postmaster (the pid on postmaster.pid's first line).
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const postmaster = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const before = cpuSample(process.pid, postmaster)!;
      const worker = await connect();
      await worker.query("SELECT count(*) FROM generate_series(1, 3000000) AS s WHERE s % 7 = 0");
      await worker.end();
      // The backend is gone once the postmaster has reaped it: wait for that, at most 5 s.
      for (
        let i = 0;
        i < 50 && (await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'")).rows[0].n > 1;
        i++
      ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const after = cpuSample(process.pid, postmaster)!;
      expect(cpuPerRun(before, after, 1).postgresMs).toBeGreaterThanOrEqual(50);
    } finally {
      await watcher.end();
    }
  });
});

describe("the CPU table (bench/agent/report.ts)", () => {
  it("prints '-' rather than Infinity when the machine counted no busy time", () => {
    const waitCpu = { clientMs: 0, serverMainMs: 0, serverOtherMs: 0, machineBusyMs: 0, machineIdle: 1, cpus: 2 };
    const columns: Column[] = [{ label: "ours (PGlite)", result: { runsPerSecond: 100, waitCpu } as unknown as WorkloadResult }];
    const floor = { graphRunsPerSecond: 3000, durableRunsPerSecond: { PGlite: 1000 }, graphFirstUpdateMs: 1, transportFirstUpdateMs: 1 };
    const text = renderCpu(columns, floor);
    expect(text).not.toMatch(/Infinity|NaN/);
  });
});
