import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { cpuPerRun, cpuSample } from "../../bench/agent/cpu-share.ts";
import { renderCpu, type Column } from "../../bench/agent/report.ts";
import type { WorkloadResult } from "../../bench/agent/workload.ts";

/**
 * The bench's CPU accounting against a real process: a child whose main thread and
 * worker thread each spin for a while, one after the other, then wait to be read.
 */
describe("CPU per run from /proc (bench/agent/cpu-share.ts)", () => {
  it("tells a server's main thread from its other threads", async () => {
    const script = `
      const { Worker } = require("node:worker_threads");
      const spin = (ms) => { const end = Date.now() + ms; while (Date.now() < end); };
      spin(400);
      const worker = new Worker("const end = Date.now() + 400; while (Date.now() < end); require('node:worker_threads').parentPort.postMessage('done')", { eval: true });
      worker.once("message", () => { console.log("spun"); setTimeout(() => {}, 30000); });`;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await once(child, "spawn");
      const before = cpuSample(child.pid, undefined);
      expect(before).toBeDefined();
      // Spun, or died (then the sample below fails the test instead of waiting forever).
      await Promise.race([once(child.stdout!, "data"), once(child, "exit")]);
      const after = cpuSample(child.pid, undefined)!;
      const perRun = cpuPerRun(before!, after, 1);
      // Spinning 400 ms of wall time: at least a quarter of it on a CPU, even on a busy machine.
      expect(perRun.serverMainMs).toBeGreaterThanOrEqual(100);
      expect(perRun.serverMainMs).toBeLessThan(2_000);
      expect(perRun.serverOtherMs).toBeGreaterThanOrEqual(100);
      expect(perRun.postgresMs).toBeUndefined();
      expect(perRun.machineBusyMs).toBeGreaterThanOrEqual(perRun.serverMainMs + perRun.serverOtherMs - 20);
    } finally {
      child.kill();
    }
  });

  it("answers undefined for a process that is gone", () => {
    expect(cpuSample(2 ** 22 + 12345, undefined)).toBeUndefined();
  });

  it("puts the figures beside the durable ceiling of the same back end", () => {
    const result = (runsPerSecond: number, machineBusyMs: number) =>
      ({
        runsPerSecond,
        waitCpu: { clientMs: 1, serverMainMs: 1.2, serverOtherMs: 0.8, machineBusyMs, machineIdle: 0.2, cpus: 2 },
      }) as unknown as WorkloadResult;
    const columns: Column[] = [
      { label: "ours (PGlite)", result: result(500, 4) },
      { label: "ours (PostgreSQL)", result: result(300, 5) },
    ];
    const floor = {
      graphRunsPerSecond: 3000,
      durableRunsPerSecond: { PGlite: 1000, PostgreSQL: 1200 },
      durableMachineMsPerRun: { PGlite: 1.5 },
      graphFirstUpdateMs: 1,
      transportFirstUpdateMs: 1,
    };
    const lines = renderCpu(columns, floor).split("\n");
    const row = (name: string) =>
      lines
        .find((l) => l.trimStart().startsWith(name))!
        .trim()
        .split(/\s{2,}/);
    expect(row("share of the durable ceiling (goal: 50%)")).toEqual(["share of the durable ceiling (goal: 50%)", "50%", "25%"]);
    // 2 CPUs × 1000 ms / 4 ms = 500 runs/s; 2000 / 5 = 400.
    expect(row("runs/s with every CPU busy at this cost")).toEqual(["runs/s with every CPU busy at this cost", "500.0", "400.0"]);
    expect(row("the same at the durable ceiling")).toEqual(["the same at the durable ceiling (graph + checkpointer in-process)", "1.50", "-"]);
  });
});
