import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runSlipway, spawnAgent } from "../support/agent-process.ts";

/**
 * `slipway agent --data-dir` that cannot be used: a clear error, at once. It used to
 * print "[object Object]" for a directory it could not write, and to hang for ever (at
 * full CPU) on a path under /proc.
 */
const CONFIG = fileURLToPath(new URL("../fixtures/graph-loading/langgraph.json", import.meta.url));
const FAST_MS = 20_000;
const start = (dataDir: string, options: Parameters<typeof runSlipway>[1] = {}) =>
  runSlipway(["agent", "--config", CONFIG, "--port", "0", "--data-dir", dataDir], { timeoutMs: 45_000, ...options });

const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

describe("slipway agent with a --data-dir it cannot use", () => {
  it("an existing directory this process may not write: says so, naming it", async () => {
    // Root writes through permission bits, so as root the server runs as `nobody` (uid
    // 65534) against a directory root owns with mode 0755: a real EACCES. The directory
    // sits in /tmp itself, as the run's own temporary root (mode 0700) is closed to
    // nobody. Nobody also needs a temporary directory (tsx keeps its cache there, in
    // tsx-<uid>): one of its own, removed with the rest.
    const asRoot = process.getuid?.() === 0;
    const parent = mkdtempSync(join(asRoot ? "/tmp" : tmpdir(), "slipway-readonly-"));
    cleanup.push(parent);
    const dir = join(parent, "data");
    mkdirSync(dir);
    chmodSync(parent, 0o755);
    chmodSync(dir, asRoot ? 0o755 : 0o555);
    let ownTmp: string | undefined;
    if (asRoot) {
      ownTmp = mkdtempSync(join("/tmp", "slipway-nobody-tmp-"));
      cleanup.push(ownTmp);
      chownSync(ownTmp, 65534, 65534);
    }
    const run = await start(dir, asRoot ? { uid: 65534, gid: 65534, env: { TMPDIR: ownTmp } } : {});
    chmodSync(dir, 0o755);
    // Nothing of nobody's is left in the system's temporary directory.
    if (asRoot) expect(existsSync("/tmp/tsx-65534")).toBe(false);
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain("[object Object]");
    expect(run.stderr).toContain(`slipway agent: the embedded database directory ${dir} is not writable by this process: EACCES: permission denied`);
    expect(run.ms).toBeLessThan(FAST_MS);
  });

  it("a path whose parent is a regular file: names the file", async () => {
    const parent = mkdtempSync(join(tmpdir(), "slipway-notdir-"));
    const file = join(parent, "not-a-directory");
    writeFileSync(file, "");
    const run = await start(join(file, "data"));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`slipway agent: embedded database directory ${join(file, "data")}: ${file} is not a directory`);
    expect(run.ms).toBeLessThan(FAST_MS);
  });

  it("a path under /proc, where nothing can be created: fails fast instead of hanging", async () => {
    const dir = `/proc/slipway-test-${process.pid}-${Date.now()}`;
    const run = await start(dir);
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`slipway agent: cannot create the embedded database directory ${dir}: ENOENT`);
    expect(run.ms).toBeLessThan(FAST_MS);
  });

  it("a directory another live process serves: refused, naming it; taken over once that process is killed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "slipway-locked-"));
    cleanup.push(dir);
    const first = await spawnAgent(["--config", CONFIG, "--data-dir", dir]);
    try {
      const second = await start(dir);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`slipway agent: the embedded database directory ${dir} is in use by process ${first.child.pid}`);
    } finally {
      await first.kill("SIGKILL");
    }
    const again = await spawnAgent(["--config", CONFIG, "--data-dir", dir]);
    try {
      expect((await fetch(`${again.url}/ok`)).status).toBe(200);
    } finally {
      await again.kill();
    }
  }, 120_000);
});
