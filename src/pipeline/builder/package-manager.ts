import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * How a project's dependencies are installed, chosen as the vendor's build does: by the
 * lock file at the install root, in this order, else `npm install` (package.json's
 * `packageManager` without its lock file does not change that). A project without
 * package.json installs nothing. Where `packageManager` pins the manager of the lock
 * file, that version runs (through corepack), so that it reads the project's own
 * settings (.yarnrc.yml, pnpm-workspace.yaml) as its author's did.
 */
export interface InstallPlan {
  manager: "npm" | "yarn" | "pnpm" | "bun" | "none";
  /** What chose it, for the build log. */
  reason: string;
  /** The program and its arguments (no shell). */
  argv: string[];
  /** The lock file, whose content goes into the build's identity. */
  lockFile?: string;
  /** package.json's `packageManager` ("yarn@4.5.0"), when it names this manager. */
  pinned?: string;
}

const LOCK_FILES: Array<{ file: string; manager: InstallPlan["manager"]; argv: string[] }> = [
  { file: "yarn.lock", manager: "yarn", argv: ["yarn", "install", "--frozen-lockfile"] },
  { file: "pnpm-lock.yaml", manager: "pnpm", argv: ["pnpm", "install", "--frozen-lockfile"] },
  { file: "package-lock.json", manager: "npm", argv: ["npm", "ci"] },
  { file: "bun.lockb", manager: "bun", argv: ["bun", "install"] },
  { file: "bun.lock", manager: "bun", argv: ["bun", "install"] },
];

const NO_LOCK_FILE = `no lock file (${LOCK_FILES.map((lock) => lock.file).join(", ")})`;

export function planInstall(installDir: string): InstallPlan {
  const manifest = join(installDir, "package.json");
  const declared = existsSync(manifest) ? readPackageManager(manifest) : undefined;
  for (const lock of LOCK_FILES) {
    if (existsSync(join(installDir, lock.file))) {
      const pinned = declared?.startsWith(`${lock.manager}@`) ? declared : undefined;
      return { manager: lock.manager, reason: `${lock.file} found`, argv: installArgv(lock.argv, pinned), lockFile: join(installDir, lock.file), pinned };
    }
  }
  if (!existsSync(manifest)) return { manager: "none", reason: "no package.json", argv: [] };
  const other = declared && !declared.startsWith("npm@") ? `; package.json's packageManager ${declared.split("+")[0]} needs its lock file to be used` : "";
  return { manager: "npm", reason: `${NO_LOCK_FILE}, so npm installs, as in the vendor's build${other}`, argv: ["npm", "install"] };
}

/** Yarn 2 and later name the frozen install `--immutable`. */
function installArgv(argv: string[], pinned: string | undefined): string[] {
  const major = Number(/^yarn@(\d+)/.exec(pinned ?? "")?.[1]);
  return major >= 2 ? ["yarn", "install", "--immutable"] : argv;
}

/** `"pnpm@9.1.0+sha..."`, as written; anything unreadable → undefined. */
function readPackageManager(manifest: string): string | undefined {
  try {
    const value = (JSON.parse(readFileSync(manifest, "utf8")) as { packageManager?: unknown }).packageManager;
    return typeof value === "string" ? value.trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The program to start for a manager: corepack (shipped with Node) for a pinned yarn or
 * pnpm, so the pinned version runs; else the manager's own binary when it is on PATH;
 * yarn and pnpm otherwise through corepack, which fetches them from the npm registry.
 * Undefined when it cannot be run here (bun not installed).
 */
export function resolveManager(plan: Pick<InstallPlan, "argv" | "pinned">, onPath: (program: string) => boolean): string[] | undefined {
  const [program, ...rest] = plan.argv;
  if (plan.pinned && (program === "yarn" || program === "pnpm") && onPath("corepack")) return ["corepack", program, ...rest];
  if (onPath(program)) return [program, ...rest];
  if (program === "yarn" || program === "pnpm") return onPath("corepack") ? ["corepack", program, ...rest] : undefined;
  return undefined;
}

/**
 * Advice for an install that failed in a way the project cannot fix: corepack refusing
 * the manager it downloaded because the registry (a mirror, usually) strips npm's
 * signatures from package metadata.
 */
export function installAdvice(output: readonly string[]): string | undefined {
  if (!output.some((line) => line.includes("No compatible signature found in package metadata") || /Corepack cannot download/.test(line))) return undefined;
  return (
    "corepack refused the package manager it downloaded: the npm registry it reached (COREPACK_NPM_REGISTRY, else registry.npmjs.org, " +
    'perhaps through a mirror) serves package metadata without npm\'s signatures ("No compatible signature found in package metadata"). ' +
    "Set COREPACK_INTEGRITY_KEYS=0 in the environment of `slipway up` to skip that check, or point COREPACK_NPM_REGISTRY at a registry " +
    "that keeps signatures: COREPACK_* settings reach builds. Or set source_config.install_command."
  );
}
