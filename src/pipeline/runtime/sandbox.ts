import { execFileSync } from "node:child_process";
import { closeSync, constants, existsSync, lstatSync, openSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * How a deployment's code (installs, build commands, the graph check, agent processes)
 * is kept away from the control plane and from other deployments (docs/decisions/0030):
 * - `own-user`: bubblewrap (private mount, PID, IPC and UTS namespaces) started by root,
 *   and inside it the deployment's own unprivileged uid (setpriv, no new privileges);
 * - `namespaces`: bubblewrap in a user namespace, when the control plane is not root;
 * - `none`: the code runs as the control plane does. `slipway up` says so at start.
 */
export type SandboxLevel = "own-user" | "namespaces" | "none";

export interface SandboxSpec {
  /** The deployment's uid (used at level own-user). */
  uid: number;
  /** The program and its arguments, as they run inside. */
  argv: string[];
  cwd: string;
  /** Seen read-only at the same path (the build, for an agent). Opened here, so that no path above them has to be open to the uid. */
  readOnly: string[];
  /** Seen writable at the same path (its sockets' directory, the source tree of a build). */
  writable: string[];
  /** Size of its private /tmp, in bytes (a disk filler meets ENOSPC there). */
  tmpBytes: number;
  /** cgroup.procs files the sandbox enters before it starts (resource limits). */
  cgroupProcs: string[];
  /** Index of the first stdio slot free for the directories passed down (after stdin, stdout, stderr, ipc...). */
  firstFd: number;
}

export interface SandboxedCommand {
  program: string;
  args: string[];
  /** Directory descriptors for the stdio slots from firstFd on; close them once spawned. */
  fds: number[];
}

const SLIPWAY_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/** What of the system a program needs, read-only; the rest of /etc (shadow, ssh keys, ...) stays out. */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const ETC_FILES = [
  "resolv.conf",
  "hosts",
  "host.conf",
  "gai.conf",
  "nsswitch.conf",
  "passwd",
  "group",
  "localtime",
  "ssl",
  "ca-certificates",
  "ca-certificates.conf",
  "pki",
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "python3",
  "npmrc",
  "mime.types",
];

export class Sandbox {
  private constructor(
    readonly level: SandboxLevel,
    /** Why the level is not own-user, for the start-up message. */
    readonly reason: string | undefined,
    private readonly bwrap: string | undefined,
  ) {}

  /** Finds out what this machine allows: bubblewrap present and working, root or not. */
  static probe(env: NodeJS.ProcessEnv = process.env): Sandbox {
    if (env.SLIPWAY_SANDBOX === "off") return new Sandbox("none", "SLIPWAY_SANDBOX=off", undefined);
    if (process.platform !== "linux") return new Sandbox("none", `bubblewrap needs Linux (this is ${process.platform})`, undefined);
    const bwrap = onPath("bwrap", env.PATH);
    if (!bwrap) return new Sandbox("none", "bubblewrap (bwrap) is not installed", undefined);
    const root = process.getuid?.() === 0;
    const probe = new Sandbox(root ? "own-user" : "namespaces", undefined, bwrap);
    try {
      const command = probe.command({ uid: 65534, argv: ["/bin/true"], cwd: "/", readOnly: [], writable: [], tmpBytes: 1 << 20, cgroupProcs: [], firstFd: 3 });
      execFileSync(command.program, command.args, { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
      return probe;
    } catch (error) {
      const stderr = String((error as { stderr?: Buffer }).stderr ?? "").trim();
      return new Sandbox("none", `bubblewrap cannot start here (${stderr || (error as Error).message}): user namespaces may be disabled`, undefined);
    }
  }

  /** A sandbox that runs everything as it is (tests of the no-sandbox path, other platforms). */
  static none(reason: string): Sandbox {
    return new Sandbox("none", reason, undefined);
  }

  /** The command line that runs `spec.argv` inside the sandbox (or as it is, at level none). */
  command(spec: SandboxSpec): SandboxedCommand {
    if (this.level === "none" || !this.bwrap) return { program: spec.argv[0], args: spec.argv.slice(1), fds: [] };
    const args = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
    // As root, no user namespace: the process becomes a real unprivileged uid (setpriv below).
    if (this.level === "own-user") args.push("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID");
    else args.push("--unshare-user", "--cap-drop", "ALL");
    args.push("--proc", "/proc", "--dev", "/dev", "--size", String(spec.tmpBytes), "--perms", "1777", "--tmpfs", "/tmp");
    const mount = new Mounts(args);
    for (const dir of SYSTEM_DIRS) mount.path(dir);
    for (const file of ETC_FILES) mount.path(join("/etc", file));
    mount.path(nodePrefix());
    for (const entry of ["bin", "dist", "src", "package.json", "node_modules"]) mount.path(join(SLIPWAY_ROOT, entry));
    const fds: number[] = [];
    const passDirectory = (path: string, flag: string) => {
      fds.push(openSync(path, constants.O_RDONLY | constants.O_DIRECTORY));
      mount.parents(path);
      args.push(flag, String(spec.firstFd + fds.length - 1), path);
    };
    try {
      for (const path of spec.readOnly) passDirectory(path, "--ro-bind-fd");
      for (const path of spec.writable) passDirectory(path, "--bind-fd");
    } catch (error) {
      for (const fd of fds) closeSync(fd);
      throw error;
    }
    args.push("--chdir", "/", "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--");
    if (this.level === "own-user") {
      args.push("setpriv", `--reuid=${spec.uid}`, `--regid=${spec.uid}`, "--clear-groups", "--inh-caps=-all", "--no-new-privs", "--");
    }
    // Into its directory once it is the deployment's uid (root without capabilities may not enter it).
    args.push("/bin/sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", spec.cwd, ...spec.argv);
    if (!spec.cgroupProcs.length) return { program: this.bwrap, args, fds };
    // The shell joins the cgroups, then becomes bubblewrap: nothing forks before it is limited.
    const join_ = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';
    return { program: "/bin/sh", args: ["-c", join_, "sh", ...spec.cgroupProcs, "--", this.bwrap, ...args], fds };
  }
}

/**
 * Read-only mounts at the same place as outside. The directories above a mount are made
 * 0755 (bubblewrap would make them 0700, closed to the deployment's uid); a symlink
 * (/lib -> usr/lib) stays a symlink.
 */
class Mounts {
  private readonly dirs = new Set<string>(["/", "/tmp", "/proc", "/dev"]);
  private readonly mounted = new Set<string>();

  constructor(private readonly args: string[]) {}

  path(path: string): void {
    let stat: Stats;
    try {
      stat = lstatSync(path);
    } catch {
      return;
    }
    if (this.inside(path)) return;
    this.parents(path);
    if (stat.isSymbolicLink()) {
      this.path(realpathSync(path));
      this.args.push("--symlink", readlinkSync(path), path);
    } else {
      this.args.push("--ro-bind", path, path);
    }
    this.mounted.add(path);
  }

  parents(path: string): void {
    const missing: string[] = [];
    for (let dir = dirname(path); !this.dirs.has(dir) && !this.inside(dir); dir = dirname(dir)) missing.unshift(dir);
    for (const dir of missing) {
      this.args.push("--perms", "0755", "--dir", dir);
      this.dirs.add(dir);
    }
  }

  /** Already visible: the path or one above it is mounted. */
  private inside(path: string): boolean {
    for (let dir = path; ; dir = dirname(dir)) {
      if (this.mounted.has(dir)) return true;
      if (dir === dirname(dir)) return false;
    }
  }
}

/** Where the running node is installed (/usr for a distribution's node; else its own prefix). */
function nodePrefix(): string {
  return dirname(dirname(realpathSync(process.execPath)));
}

function onPath(program: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    const candidate = dir && join(dir, program);
    if (candidate && existsSync(candidate)) return candidate;
  }
  return undefined;
}
