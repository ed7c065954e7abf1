import { describe, expect, it } from "vitest";
import { configPathProblem, repoRefProblem, repoUrlProblem } from "./source-fields.ts";

describe("repoUrlProblem", () => {
  it("accepts the URLs git hosts hand out", () => {
    for (const url of [
      "https://github.com/example/agent",
      "https://github.com/example/agent.git",
      "http://127.0.0.1:3000/team/agent.git",
      "https://git.example.com:8443/group/sub/agent.git",
      "http://[::1]:3000/agent.git",
      "git://127.0.0.1:9418/agent",
      "ssh://git@github.com/example/agent.git",
      "ssh://deploy-user@git.example.com:2222/agent.git",
      "git@github.com:example/agent.git",
      "github.com:example/agent.git",
      "HTTPS://GitHub.com/Example/Agent",
    ]) {
      expect(repoUrlProblem(url), url).toBeUndefined();
    }
  });

  it("refuses options, other transports, control characters and credentials", () => {
    const cases: [string, RegExp][] = [
      ["--upload-pack=touch /tmp/pwned", /spaces|'-'/],
      ["--upload-pack=/tmp/x", /start with '-'/],
      ["-oProxyCommand=x", /start with '-'/],
      ["ext::sh -c touch% /tmp/pwned", /spaces|remote-helper/],
      ["ext::sh", /remote-helper/],
      ["fd::17", /remote-helper/],
      ["file:///etc/passwd", /must use https, http, git or ssh, not file/],
      ["/etc/passwd", /must be an https/],
      ["./repo", /must be an https/],
      ["../repo", /must be an https/],
      ["ftp://example.com/repo", /not ftp/],
      ["git+ssh://example.com/repo", /not git\+ssh/],
      ["ssh://-oProxyCommand=touch%20/tmp/x/repo", /host|percent-encode/],
      ["ssh://-oProxyCommand=x/repo", /host/],
      ["ssh://-oProxyCommand=x@host/repo", /user name/],
      ["ssh://%2doProxyCommand=x/repo", /percent-encode ASCII/],
      ["-oProxyCommand=x@host:repo", /start with '-'/],
      ["git@-oProxyCommand=x:repo", /host/],
      ["git@host:-repo", /path/],
      ["https://github.com/a\nb", /control characters/],
      ["https://github.com/a\rb", /control characters/],
      ["https://github.com/a\u0000b", /control characters/],
      ["https://github.com/a%0ab", /control characters/],
      ["https://github.com/a b", /spaces/],
      ["https://user:secret@github.com/a", /password/],
      ["https://ghp_token@github.com/a", /credentials/],
      ["https://github.com/a/../../etc", /'\.\.'/],
      ["", /empty/],
    ];
    for (const [url, reason] of cases) expect(repoUrlProblem(url), JSON.stringify(url)).toMatch(reason);
  });
});

describe("repoRefProblem", () => {
  it("accepts branches, tags, full refs and full commit shas", () => {
    for (const ref of [
      "main",
      "feature/new-graph",
      "v1.2.3",
      "refs/heads/main",
      "refs/tags/v1",
      "release-2026.11",
      "a".repeat(40),
      "0123456789abcdef".repeat(4),
      "ünicode",
    ]) {
      expect(repoRefProblem(ref), ref).toBeUndefined();
    }
  });

  it("refuses what git check-ref-format refuses, and leading '-'", () => {
    const cases: [string, RegExp][] = [
      ["-main", /'-'/],
      ["--upload-pack=x", /'-'/],
      ["../../etc/passwd", /'\.\.'/],
      ["a..b", /'\.\.'/],
      ["main\n", /control/],
      ["ma\u0000in", /control/],
      ["ma\u007fin", /control/],
      ["my branch", /spaces/],
      ["a~1", /~/],
      ["a^", /\^/],
      ["a:b", /:/],
      ["a?", /\?/],
      ["a*", /\*/],
      ["a[0]", /\[/],
      ["a\\b", /\\/],
      ["main@{1}", /@\{/],
      ["@", /@/],
      ["main.lock", /\.lock/],
      ["refs/heads/x.lock/y", /\.lock/],
      ["main/", /'\/'/],
      ["/main", /'\/'/],
      ["a//b", /'\/\/'/],
      ["main.", /'\.'/],
      [".hidden", /start with '\.'/],
      ["refs/.hidden/x", /start with '\.'/],
      ["", /empty/],
    ];
    for (const [ref, reason] of cases) expect(repoRefProblem(ref), JSON.stringify(ref)).toMatch(reason);
  });
});

describe("configPathProblem", () => {
  it("accepts paths inside the repository", () => {
    for (const path of ["langgraph.json", "./langgraph.json", "apps/agent/langgraph.json", "a..b/langgraph.json"]) {
      expect(configPathProblem(path), path).toBeUndefined();
    }
  });

  it("refuses absolute paths, '..' segments, backslashes and control characters", () => {
    const cases: [string, RegExp][] = [
      ["/etc/passwd", /absolute/],
      ["C:/x/langgraph.json", /absolute/],
      ["../langgraph.json", /'\.\.'/],
      ["apps/../../langgraph.json", /'\.\.'/],
      ["..", /'\.\.'/],
      ["apps\\langgraph.json", /'\\'/],
      ["..\\..\\x", /'\\'/],
      ["lang\u0000graph.json", /control/],
      ["langgraph.json\n", /control/],
      ["", /empty/],
    ];
    for (const [path, reason] of cases) expect(configPathProblem(path), JSON.stringify(path)).toMatch(reason);
  });
});
