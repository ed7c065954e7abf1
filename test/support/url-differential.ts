import { execFile } from "node:child_process";
import { pick } from "./fuzz.ts";

/**
 * Repository URLs built to be read differently by different parsers: a host the guard
 * allows written where the WHATWG parser looks for the host, a host it refuses where
 * git or curl do, joined by the characters that split readers (`\`, `%40`, `#`, `?`,
 * spaces...), for every scheme git accepts and the scp-like form; and plain URLs, so
 * that accepted ones are tested too.
 */
export interface Hosts {
  /** The allowed host's two listeners: the integration's origin, and another port. */
  allowedA: string;
  allowedB: string;
  /** Services on loopback that must never be reached: `127.0.0.1:port`, `[::1]:port`. */
  internal4: string;
  internal6: string;
}

const SCHEMES = ["http", "https", "git", "ssh"];
const ODD_SCHEMES = ["HTTP", "Https", "git+ssh", "ssh+git", "file", "http:", "https:/"];
/** Where WHATWG and curl part ways: generated more often than the other separators. */
const SPLITTERS = ["\\@", "\\\\@", "\\", "/..\\@"];
const SEPARATORS = ["@", "%40", "%5C@", "\\", "%2F@", "%5C", "#@", "?@", " @", "\t@", ";@", ":@", "@@", "\\/", "/..\\@", "%00@", "\u3002@"];
const PATHS = ["/x.git", "/team/agent.git", "/~u/x.git", "/a/../x.git", "/%2e%2e/x", "", "/", "/x.git?y", "/x.git#y", "//x.git", "/x%20y.git", "/é.git"];
const USERS = ["", "git@", "deploy_user@", "x:y@", "-oProxyCommand=x@", "%67it@"];

export function differentialUrls(random: () => number, hosts: Hosts, count: number): string[] {
  const port = (hostPort: string) => hostPort.slice(hostPort.lastIndexOf(":") + 1);
  const targets = [
    hosts.internal4,
    hosts.internal6,
    hosts.allowedA,
    hosts.allowedB,
    `2130706433:${port(hosts.internal4)}`,
    `127.1:${port(hosts.internal4)}`,
    `0x7f.0.0.1:${port(hosts.internal4)}`,
    `localhost:${port(hosts.internal4)}`,
    `[::ffff:127.0.0.1]:${port(hosts.internal4)}`,
    `127.0.0.2:0${port(hosts.allowedA)}`,
    hosts.allowedA.toUpperCase(),
  ];
  const decoys = [hosts.allowedA, hosts.allowedB, "127.0.0.2", "github.com"];
  const one = <T>(list: readonly T[]) => pick(random, list, 1)[0];
  const urls: string[] = [];
  for (let i = 0; i < count; i++) {
    const scheme = one(random() < 0.8 ? SCHEMES : ODD_SCHEMES);
    const separator = one(random() < 0.5 ? SPLITTERS : SEPARATORS);
    const hidden = random() < 0.6 ? one([hosts.internal4, hosts.internal6]) : one(targets);
    const path = one(PATHS);
    const shape = random();
    if (shape < 0.25)
      urls.push(`${one(["http", "https", "git", "ssh", "HTTP"])}://${one([hosts.allowedA, hosts.allowedB])}${one(["/x.git", "/team/agent.git", "/~u/x.git"])}`);
    else if (shape < 0.4) urls.push(`${scheme}://${one(targets)}${path}`);
    else if (shape < 0.5) urls.push(`${scheme}://${one(USERS)}${one(targets)}${path}`);
    else if (shape < 0.85) urls.push(`${scheme}://${one(decoys)}${separator}${hidden}${path}`);
    else {
      // scp-like: [user@]host:path, and decoys in front of it.
      const host = one(targets).replace(/:\d+$/, "");
      const front = random() < 0.5 ? "" : `${one(decoys)}${separator}`;
      urls.push(`${front}${one(USERS)}${host}:${path.replace(/^\//, "") || "x.git"}`);
    }
  }
  return urls;
}

/**
 * Runs git, unguarded, on `url` (ls-remote, no prompt, no config of this machine) so that
 * the listeners see where git itself goes. Only http(s), git and ssh: never a local path.
 */
export function rawGit(url: string): Promise<void> {
  return new Promise((resolve) => {
    execFile(
      "git",
      ["-c", "protocol.file.allow=never", "ls-remote", "--", url],
      {
        timeout: 10_000,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          GIT_TERMINAL_PROMPT: "0",
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_CONFIG_GLOBAL: "/dev/null",
          GIT_ALLOW_PROTOCOL: "http:https:git:ssh",
          GIT_SSH_COMMAND: "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5",
        },
      },
      () => resolve(),
    );
  });
}
