import { describe, expect, it } from "vitest";
import { baseUrlOrigin, gitOrigin, gitUrlText, readGitUrl, type GitUrl } from "./git-url.ts";

const read = (raw: string): GitUrl => {
  const reading = readGitUrl(raw);
  if (!reading.url) throw new Error(`${raw}: ${reading.problem}`);
  return reading.url;
};

describe("readGitUrl", () => {
  it("reads each form into its parts and canonical text", () => {
    expect(read("HTTPS://GitHub.com/Example/Agent.git")).toEqual({
      form: "url",
      scheme: "https",
      user: undefined,
      host: "github.com",
      port: undefined,
      path: "/Example/Agent.git",
      href: "https://github.com/Example/Agent.git",
    });
    expect(read("http://[0:0::1]:3000/a.git")).toMatchObject({ host: "::1", port: 3000, href: "http://[::1]:3000/a.git" });
    expect(read("ssh://deploy_user@git.example.com:2222/~u/a.git")).toMatchObject({ scheme: "ssh", user: "deploy_user", port: 2222, path: "/~u/a.git" });
    expect(read("git://127.0.0.1:9418/agent")).toMatchObject({ scheme: "git", host: "127.0.0.1", port: 9418 });
    expect(read("git@GitHub.com:example/agent.git")).toEqual({
      form: "scp",
      scheme: "ssh",
      user: "git",
      host: "github.com",
      path: "example/agent.git",
      href: "git@github.com:example/agent.git",
    });
    expect(read("https://git.example.com/caf%C3%A9.git").path).toBe("/caf%C3%A9.git");
  });

  it("refuses what git or curl could read differently from the guard, naming why", () => {
    const cases: [string, RegExp][] = [
      ["http://127.0.0.2:33269\\@127.0.0.1:46331/x.git", /'\\'/],
      ["http://127.0.0.2:33269\\\\@127.0.0.1:46331/x.git", /'\\'/],
      ["https://127.0.0.2:33269\\@[::1]:46331/x.git", /'\\'/],
      ["git://127.0.0.2\\@127.0.0.1/x.git", /'\\'/],
      ["http://127.0.0.2%40127.0.0.1/x.git", /percent-encode ASCII/],
      ["http://127.0.0.2/%2e%2e/x.git", /percent-encode ASCII/],
      ["http://127.0.0.2#@127.0.0.1/x.git", /query or a fragment/],
      ["http://127.0.0.2?@127.0.0.1/x.git", /query or a fragment/],
      ["http://a@b@127.0.0.1/x.git", /more than one '@'/],
      ["http://git@127.0.0.2/x.git", /credentials or a user name/],
      ["git://git@127.0.0.2/x.git", /credentials or a user name/],
      ["ssh://git:pw@127.0.0.2/x.git", /password/],
      ["http://2130706433/x.git", /spell the address as 127\.0\.0\.1/],
      ["http://127.1/x.git", /spell the address as 127\.0\.0\.1/],
      ["git://0x7f.0.0.1/x.git", /spell the address as 127\.0\.0\.1/],
      ["http://host.123/x.git", /host must be/],
      ["http://host:/x.git", /port/],
      ["http://host:080/x.git", /port/],
      ["http://host:70000/x.git", /port/],
      ["http://host", /name a repository/],
      ["http://host/", /name a repository/],
      ["http://host//x.git", /path may hold/],
      ["http://host/a/./x.git", /'\.' or '\.\.'/],
      ["http://hést/x.git", /ASCII/],
      ["http://host/x\u3002git", /ASCII/],
      ["http://host/x y.git", /spaces/],
      ["http://host/x;y.git", /path may hold/],
      ["http:127.0.0.1/x.git", /URL without its '\/\/'/],
      ["file:///etc/passwd", /not file \(a file:\/\/ URL reads this server's own files\)/],
      ["/srv/repo.git", /local paths are refused/],
      ["git@[::1:path", /host|must be an https/],
      ["git@host:a/../b", /'\.' or '\.\.'/],
    ];
    for (const [raw, why] of cases) expect(readGitUrl(raw).problem, JSON.stringify(raw)).toMatch(why);
  });

  it("never throws, and reads its canonical text back as itself", () => {
    const pieces = [
      "http://",
      "https://",
      "ssh://",
      "git://",
      "git@",
      "h",
      "127.0.0.2",
      "[::1]",
      ":80",
      ":",
      "/",
      "@",
      "\\",
      "%40",
      "%C3%A9",
      "[",
      "]",
      ".",
      "..",
      "~",
      "-",
      "#",
      "?",
      " ",
      "é",
      "\u0000",
      "x.git",
    ];
    let state = 31;
    const next = (n: number) => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      let raw = "";
      for (let j = next(10); j > 0; j--) raw += pieces[next(pieces.length)];
      const reading = readGitUrl(raw);
      if (!reading.url) continue;
      accepted++;
      expect(readGitUrl(reading.url.href).url, raw).toEqual(reading.url);
    }
    expect(accepted).toBeGreaterThan(50);
  });

  it("builds the text git is given with the checked address in place of the name", () => {
    expect(gitUrlText(read("ssh://git@git.example.com:2222/a.git"), "203.0.113.9")).toBe("ssh://git@203.0.113.9:2222/a.git");
    expect(gitUrlText(read("git@git.example.com:team/a.git"), "2001:db8::1")).toBe("git@[2001:db8::1]:team/a.git");
    expect(gitUrlText(read("git://git.example.com/a.git"), "198.51.100.7")).toBe("git://198.51.100.7/a.git");
  });

  it("compares origins by scheme, host and port, default ports filled in", () => {
    expect(gitOrigin(read("https://GIT.example.com/a.git"))).toBe(baseUrlOrigin("https://git.example.com:443/"));
    expect(gitOrigin(read("http://127.0.0.2:45747/a.git"))).not.toBe(baseUrlOrigin("http://127.0.0.2:33269/"));
    expect(gitOrigin(read("https://127.0.0.2:33269/a.git"))).not.toBe(baseUrlOrigin("http://127.0.0.2:33269/"));
    expect(gitOrigin(read("http://[::1]/a.git"))).toBe(baseUrlOrigin("http://[0::1]:80/"));
  });
});
