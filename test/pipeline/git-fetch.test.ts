import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchCommit, resolveCommit } from "../../src/pipeline/source/git.ts";
import { startGitDaemon, startGitHttp, TestRepository, type GitServer } from "../support/git-server.ts";

/**
 * The pipeline's fetch against real git servers on loopback, after the canonical-URL rule
 * (decision 0032): git is handed the canonical URL pinned to the checked address, a URL
 * with its scheme in capitals still works, and the token reaches a smart-HTTP server
 * that requires it.
 */
const TOKEN = "real-server-token";
const POLICY = { allowHosts: ["127.0.0.1"] };
const context = () => ({ log: { info: () => undefined, tail: () => [] as string[] }, signal: AbortSignal.timeout(60_000), gitHosts: POLICY });

describe("fetching from real git servers with canonical URLs", () => {
  let root: string;
  let http: GitServer & { requests: string[] };
  let daemon: GitServer;
  let commit: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-git-fetch-"));
    const repo = new TestRepository(join(root, "repos"), "agent");
    commit = repo.commit({ "langgraph.json": "{}\n" }, "first");
    http = await startGitHttp(join(root, "repos"), { token: TOKEN });
    daemon = await startGitDaemon(join(root, "repos"));
  });
  afterAll(async () => {
    await http?.stop();
    await daemon?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("resolves and checks out over smart HTTP with the integration's token, sent to its origin", async () => {
    const source = { url: http.url("agent"), ref: "main", integration: { baseUrl: http.baseUrl, token: TOKEN } };
    expect(await resolveCommit(source, context())).toBe(commit);
    const dir = join(root, "checkout-http");
    await fetchCommit(source, commit, dir, context());
    expect(readFileSync(join(dir, "langgraph.json"), "utf8")).toBe("{}\n");
    expect(existsSync(join(dir, ".git"))).toBe(false);
    expect(http.requests.every((line) => line.endsWith(" auth"))).toBe(true);
  });

  it("resolves over git:// with the scheme in capitals, pinned to the checked address", async () => {
    const url = daemon.url("agent").replace("git://", "GIT://");
    expect(await resolveCommit({ url, ref: "main" }, context())).toBe(commit);
  });
});
