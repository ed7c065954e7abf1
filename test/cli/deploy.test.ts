import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startControlPlane, type ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startGitDaemon, TestRepository, type GitServer } from "../support/git-server.ts";
import { sampleFiles, writeSampleProject } from "../pipeline/sample-project.ts";

/**
 * The `slipway` CLI as a user runs it (a subprocess of bin/slipway.js) against a real
 * `slipway up` and a git daemon on loopback: deploys from a directory and from git that
 * the official SDK then uses, and the exit codes a CI job relies on.
 */
const SLOW = 900_000;
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe("slipway CLI against a control plane", () => {
  let root: string;
  let cp: ControlPlaneProcess;
  let git: GitServer;
  let env: Record<string, string>;

  /** Runs `slipway <args>` with the control plane's address, key and workspace in the environment. */
  function start(args: string[], extraEnv: Record<string, string> = {}, command?: (args: string[]) => [string, string[]]) {
    const [file, argv] = command ? command(args) : [process.execPath, ["bin/slipway.js", ...args]];
    const child = spawn(file, argv, { cwd: ROOT, env: { ...process.env, ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
    const ran: Ran = { code: null, stdout: "", stderr: "" };
    child.stdout.on("data", (chunk) => (ran.stdout += chunk));
    child.stderr.on("data", (chunk) => (ran.stderr += chunk));
    const done = new Promise<Ran>((resolve) => child.once("close", (code) => resolve({ ...ran, code })));
    return { child, ran, done };
  }
  const slipway = (...args: Parameters<typeof start>) => start(...args).done;

  /**
   * A deploy that times out waiting for readiness, started early by the directory test so
   * that its minute of waiting passes while the other tests run.
   */
  let neverReady: Promise<Ran> | undefined;
  function deployNeverReady(): Promise<Ran> {
    const slow = join(root, "never-ready");
    writeSampleProject(slow, "v1");
    // Loads at the build's check (`slipway agent --check`), then never gets ready when served.
    writeFileSync(
      join(slow, "src/whoami.ts"),
      'if (!process.argv.includes("--check")) await new Promise(() => setInterval(() => undefined, 1_000));\nexport { graph as whoami } from "./agent.ts";\n',
    );
    return slipway(["deploy", slow, "--json"]);
  }

  const whoami = (url: string) =>
    new Client({ apiUrl: url, apiKey: cp.apiKey }).runs.wait(null, "whoami", { input: {} }) as Promise<{ version: string; greeting: string }>;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-cli-"));
    mkdirSync(join(root, "repos"));
    git = await startGitDaemon(join(root, "repos"));
    cp = await startControlPlane(["--data-dir", join(root, "cp")], {
      SLIPWAY_GIT_ALLOW_HOSTS: "127.0.0.1",
      SLIPWAY_PACKAGE_CACHE: join(tmpdir(), "slipway-test-package-cache"),
      // Generous for a loaded machine: a good revision must never time out here.
      SLIPWAY_READINESS_TIMEOUT_SECONDS: "60",
      SLIPWAY_STOP_GRACE_SECONDS: "4",
      SLIPWAY_DRAIN_TIMEOUT_SECONDS: "3",
      SLIPWAY_DATABASE_URL: undefined,
    });
    env = {
      SLIPWAY_URL: cp.url,
      SLIPWAY_API_KEY: cp.apiKey!,
      SLIPWAY_TENANT_ID: cp.workspaceId!,
      SLIPWAY_CONFIG_DIR: join(root, "config"),
      NO_COLOR: "",
    };
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await git?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("refuses a wrong key with exit 5, naming the header and where the key came from", async () => {
    const ran = await slipway(["deployments", "list"], { SLIPWAY_API_KEY: "slw_0123456789abcdef-wrong" });
    expect(ran.code, ran.stderr).toBe(5);
    expect(ran.stderr).toContain("refused the API key sent in the X-Api-Key header");
    expect(ran.stderr).toContain("slw_0123456789abcdef…, from SLIPWAY_API_KEY");
    expect(ran.stderr).not.toContain("wrong");
    expect(ran.stdout).toBe("");
    // Nothing listening: also 5, and it says so.
    const away = await slipway(["deployments", "list", "--url", "http://127.0.0.1:9"]);
    expect(away.code).toBe(5);
    expect(away.stderr).toContain("cannot reach the control plane at http://127.0.0.1:9 (from --url)");
    // A wrong command line: 2.
    expect((await slipway(["deploy", "--timeout", "soon"])).code).toBe(2);
  });

  it("saves a profile with `login`, key file readable by its owner only, and works from it alone; manages listeners and integrations", async () => {
    const login = await slipway(["login", "--profile", "ci", "--url", cp.url, "--api-key", cp.apiKey!, "--tenant-id", cp.workspaceId!]);
    expect(login.code, login.stderr).toBe(0);
    expect(statSync(join(root, "config", "credentials.json")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(root, "config", "config.json"), "utf8")).not.toContain(cp.apiKey!);
    const fromProfile = { SLIPWAY_URL: "", SLIPWAY_API_KEY: "", SLIPWAY_TENANT_ID: "", SLIPWAY_PROFILE: "ci" };
    const listed = await slipway(["deployments", "list", "--json"], fromProfile);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    // Without --tenant-id: the organization's only workspace is found and saved.
    const solo = await slipway(["login", "--profile", "solo", "--url", cp.url, "--api-key", cp.apiKey!], { SLIPWAY_TENANT_ID: "" });
    expect(solo.code, solo.stderr).toBe(0);
    expect(solo.stderr).toContain(`workspace ${cp.workspaceId}`);
    expect(JSON.parse(readFileSync(join(root, "config", "config.json"), "utf8")).profiles.solo).toMatchObject({ tenant_id: cp.workspaceId });
    // A wrong key is checked before it is saved.
    const refused = await slipway(["login", "--profile", "wrong", "--api-key", "slw_0123456789abcdef-wrong"]);
    expect(refused.code).toBe(5);
    expect(readFileSync(join(root, "config", "config.json"), "utf8")).not.toContain('"wrong"');

    const listener = await slipway(["listeners", "create", "--compute-id", "cluster-1", "--namespace", "agents", "--json"]);
    expect(listener.code, listener.stderr).toBe(0);
    expect(JSON.parse(listener.stdout)).toMatchObject({ compute_type: "k8s", compute_id: "cluster-1", compute_config: { k8s_namespaces: ["agents"] } });
    const listeners = JSON.parse((await slipway(["listeners", "list", "--json"])).stdout) as { compute_id: string }[];
    expect(listeners.map((l) => l.compute_id)).toEqual(["cluster-1"]);
    // A 422 names the field.
    const invalid = await slipway(["listeners", "create", "--compute-id", "cluster-2", "--namespace", "Not_A_Namespace"]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/compute_config\.k8s_namespaces\[0\]: /);

    const added = await slipway(["integrations", "add", "--name", "loopback", "--base-url", git.baseUrl, "--json"]);
    expect(added.code, added.stderr).toBe(0);
    const integrations = JSON.parse((await slipway(["integrations", "list", "--json"])).stdout) as { name: string }[];
    expect(integrations.map((i) => i.name)).toEqual(["loopback"]);
  });

  it(
    "deploys a directory, serves it, lists it as JSON, and serves a changed directory after a second deploy",
    async () => {
      neverReady ??= deployNeverReady();
      const project = join(root, "my-agent");
      writeSampleProject(project, "v1");
      // Left out of the upload: ignored by .gitignore.
      writeFileSync(join(project, ".gitignore"), "secret-notes.txt\n");
      writeFileSync(join(project, "secret-notes.txt"), "not for the server");

      const first = await slipway(["deploy", project, "--secret", "GREETING=from-cli"]);
      expect(first.code, first.stderr).toBe(0);
      const url = first.stdout.trim();
      expect(url).toMatch(new RegExp(`^${cp.url}/deployments/[0-9a-f-]{36}$`));
      expect(first.stderr).toContain("Created deployment my-agent");
      expect(first.stderr).toMatch(/revision [0-9a-f-]{36}: DEPLOYED/);
      expect(await whoami(url)).toMatchObject({ version: "v1", greeting: "from-cli" });

      const listed = await slipway(["deployments", "list", "--json"]);
      expect(listed.code, listed.stderr).toBe(0);
      const deployments = JSON.parse(listed.stdout) as { name: string; url: string; status: string; active_revision_id: string }[];
      // Beside it, only the never-ready deployment started above.
      expect(deployments.map((d) => d.name).sort()).toEqual(["my-agent", "never-ready"]);
      const mine = deployments.find((d) => d.name === "my-agent")!;
      expect(mine).toMatchObject({ url, status: "READY" });
      const firstRevision = mine.active_revision_id;

      writeFileSync(join(project, "src/version.ts"), sampleFiles("v2")["src/version.ts"]);
      const second = await slipway(["deploy", project, "--json"]);
      expect(second.code, second.stderr).toBe(0);
      const events = second.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { event: string; [key: string]: unknown });
      expect(events[0]).toMatchObject({ event: "step", step: "pack" });
      expect(events.filter((e) => e.event === "status_change").at(-1)).toMatchObject({ to: "DEPLOYED" });
      expect(events.some((e) => e.event === "log" && e.type === "build")).toBe(true);
      const result = events.at(-1)!;
      expect(result).toMatchObject({ event: "result", outcome: "deployed", exit_code: 0, url });
      expect(result.revision_id).not.toBe(firstRevision);
      expect(await whoami(url)).toMatchObject({ version: "v2", greeting: "from-cli" });
    },
    SLOW,
  );

  it(
    "deploys from the git server; a --detach deploy is followed by `logs --follow` and `revisions wait` (Ctrl-C stops only the wait)",
    async () => {
      const repo = new TestRepository(join(root, "repos"), "git-agent");
      writeSampleProject(repo.work, "git-v1");
      repo.commit({}, "first");

      const first = await slipway(["deploy", "--repo", git.url("git-agent"), "--ref", "main"]);
      expect(first.code, first.stderr).toBe(0);
      const url = first.stdout.trim();
      expect(first.stderr).toContain(`Created deployment git-agent`);
      expect(await whoami(url)).toMatchObject({ version: "git-v1" });

      repo.commit({ "src/version.ts": sampleFiles("git-v2")["src/version.ts"] }, "second");
      const detached = await slipway(["deploy", "--repo", git.url("git-agent"), "--detach"]);
      expect(detached.code, detached.stderr).toBe(0);
      expect(detached.stdout.trim()).toBe(url);
      // Ctrl-C stops the waiting, not the build, and says how to wait again.
      const stopped = start(["revisions", "wait", "git-agent"]);
      await until(() => /revision [0-9a-f-]{36}: (QUEUED|CREATING|AWAITING_BUILD|BUILDING)/.test(stopped.ran.stderr));
      stopped.child.kill("SIGINT");
      const interrupted = await stopped.done;
      expect(interrupted.code, interrupted.stderr).toBe(130);
      expect(interrupted.stderr).toMatch(/Stopped waiting \(Ctrl-C\); the revision goes on on the server: deployment [0-9a-f-]{36}, revision [0-9a-f-]{36}/);
      // The hint names the command as it was run here (`node bin/slipway.js`), not a `slipway` that is not on the PATH.
      expect(interrupted.stderr).toContain("Stop it: node bin/slipway.js revisions interrupt");
      // Without --type, the log is followed through the build and the start, until the revision serves.
      const followed = await slipway(["logs", "git-agent", "--follow"]);
      expect(followed.code, followed.stderr).toBe(0);
      expect(followed.stdout).toMatch(/Installing dependencies/);
      expect(followed.stdout).toMatch(/Build [0-9a-f]+ is ready/);
      expect(followed.stdout).toMatch(/\[[0-9a-f]{8}#1\] listening on /);
      expect(followed.stderr).toMatch(/^revision [0-9a-f-]{36}: DEPLOYED$/m);
      const waited = await slipway(["revisions", "wait", "git-agent"]);
      expect(waited.code, waited.stderr).toBe(0);
      expect(waited.stdout.trim()).toBe(url);
      expect(await whoami(url)).toMatchObject({ version: "git-v2" });

      // A revision named by the first characters of its id, as process names in logs show it.
      const revisions = JSON.parse((await slipway(["revisions", "list", "git-agent", "--json"])).stdout) as { id: string }[];
      expect(revisions).toHaveLength(2);
      const byPrefix = await slipway(["revisions", "get", "git-agent", revisions[1]!.id.slice(0, 8), "--json"]);
      expect(byPrefix.code, byPrefix.stderr).toBe(0);
      expect(JSON.parse(byPrefix.stdout)).toMatchObject({ id: revisions[1]!.id });
      const unmatched = ["0000", "1111", "2222", "3333"].find((prefix) => !revisions.some((r) => r.id.startsWith(prefix)))!;
      const none = await slipway(["revisions", "get", "git-agent", unmatched]);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain(`no revision of deployment 'git-agent' has an id starting with '${unmatched}'`);

      // Piped, the wait prints plain lines; under a pseudo-terminal, one live line redrawn in place.
      expect(waited.stderr).toMatch(/^\[\d+s\] revision [0-9a-f-]{36}: DEPLOYED$/m);
      expect(waited.stderr).not.toContain("\x1b[2K");
      const live = await slipway(["revisions", "wait", "git-agent"], { TERM: "xterm", NO_COLOR: "" }, (args) => [
        "script",
        ["-qfec", ["env", "-u", "NO_COLOR", process.execPath, "bin/slipway.js", ...args].map(shellQuote).join(" "), "/dev/null"],
      ]);
      expect(live.code, live.stdout).toBe(0);
      expect(live.stdout).toContain("\r\x1b[2K");
      expect(live.stdout).toMatch(/DEPLOYED {2}\d+s/);
    },
    SLOW,
  );

  it(
    "exits 1 on a failing build with the reason and the log tail, and 3 on a readiness timeout",
    async () => {
      const broken = join(root, "broken");
      writeSampleProject(broken, "v1");
      writeFileSync(join(broken, "src/whoami.ts"), 'throw new Error("boom at import: the model key is missing");\nexport const whoami = null;\n');
      const failed = await slipway(["deploy", broken]);
      expect(failed.code, failed.stderr).toBe(1);
      expect(failed.stdout).toBe("");
      expect(failed.stderr).toMatch(/ended BUILD_FAILED: Checking the project failed: `slipway agent --check` exited with code 1/);
      // The error once, with the check's last lines, in paths of the project (not of the build's folder).
      expect(failed.stderr).toContain("Last lines of its output:");
      expect(failed.stderr).not.toMatch(/Last \d+ lines of its build log:/);
      expect(failed.stderr.split("boom at import: the model key is missing").length - 1, failed.stderr).toBe(1);
      expect(failed.stderr).toContain("importing src/whoami.ts failed");
      expect(failed.stderr).not.toContain(".tmp-");

      const timedOut = await (neverReady ??= deployNeverReady());
      expect(timedOut.code, timedOut.stderr).toBe(3);
      const result = JSON.parse(timedOut.stdout.trim().split("\n").at(-1)!);
      expect(result).toMatchObject({ event: "result", outcome: "timeout", exit_code: 3, status: "DEPLOY_FAILED", url: null });
      expect(result.status_message).toMatch(/the readiness timeout/);
      expect(timedOut.stderr).toMatch(/ended DEPLOY_FAILED/);
    },
    SLOW,
  );
});

async function until(condition: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("the condition never held");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
