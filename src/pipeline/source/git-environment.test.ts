import { existsSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { gitEnvironment, openGitSandbox, sshCommand } from "./git-environment.ts";

/** What the server's environment may not pass on to git (test/pipeline/git-environment.test.ts runs it end to end). */
const SERVER_ENV: NodeJS.ProcessEnv = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/home/slipway",
  XDG_CONFIG_HOME: "/home/slipway/.config",
  GIT_DIR: "/srv/other/.git",
  GIT_CONFIG_PARAMETERS: "'url.http://evil/.insteadOf'='http://'",
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "http.proxy",
  GIT_CONFIG_VALUE_0: "http://proxy",
  GIT_SSH: "/usr/local/bin/my-ssh",
  GIT_SSH_COMMAND: "ssh -o ProxyCommand=x",
  GIT_ASKPASS: "/usr/bin/helper",
  SSH_ASKPASS: "/usr/bin/helper",
  http_proxy: "http://proxy:3128",
  HTTPS_PROXY: "http://proxy:3128",
  CURL_HOME: "/home/slipway",
  SSH_AUTH_SOCK: "/tmp/agent.sock",
};

describe("git's environment for the pipeline", () => {
  it("is built from PATH and an empty HOME, never from the server's GIT_*, proxy or askpass variables", () => {
    const { env } = gitEnvironment("https", "/tmp/slipway-git-x", SERVER_ENV);
    expect(env).toEqual({
      PATH: SERVER_ENV.PATH,
      HOME: "/tmp/slipway-git-x",
      XDG_CONFIG_HOME: "/tmp/slipway-git-x",
      GIT_CEILING_DIRECTORIES: "/tmp",
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_ALLOW_PROTOCOL: "https",
      LANG: "C",
    });
  });

  it("keeps the ssh agent's socket for ssh only", () => {
    expect(gitEnvironment("ssh", "/tmp/h", SERVER_ENV).env.SSH_AUTH_SOCK).toBe("/tmp/agent.sock");
    expect(gitEnvironment("http", "/tmp/h", SERVER_ENV).env.SSH_AUTH_SOCK).toBeUndefined();
  });

  it("clears credential helpers and askpass, and allows the URL's transport only", () => {
    const { config } = gitEnvironment("git", "/tmp/h", SERVER_ENV);
    const settings = config.filter((_, i) => i % 2 === 1);
    expect(config.filter((_, i) => i % 2 === 0).every((flag) => flag === "-c")).toBe(true);
    expect(settings).toEqual(
      expect.arrayContaining(["credential.helper=", "core.askPass=", "protocol.allow=never", "protocol.git.allow=always", "http.followRedirects=false"]),
    );
    expect(settings.filter((s) => /^protocol\.[a-z]+\.allow=always$/.test(s))).toEqual(["protocol.git.allow=always"]);
  });

  it("runs ssh without any config file, in batch mode, checking the key under the host's name", () => {
    expect(sshCommand("git.example.com")).toBe("ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o HostKeyAlias=git.example.com");
  });

  it("opens an empty directory as HOME and working directory, and removes it", () => {
    const sandbox = openGitSandbox("https", SERVER_ENV);
    expect(readdirSync(sandbox.dir)).toEqual([]);
    expect(sandbox.env.HOME).toBe(sandbox.dir);
    sandbox.remove();
    expect(existsSync(sandbox.dir)).toBe(false);
  });
});
