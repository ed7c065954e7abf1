import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * How a project's dependencies are installed, chosen as the vendor's build does: by the
 * lock file at the install root, in this order, then by package.json's `packageManager`,
 * else `npm install`. A project without package.json installs nothing.
 */
export interface InstallPlan {
  manager: "npm" | "yarn" | "pnpm" | "bun" | "none";
  /** What chose it, for the build log. */
  reason: string;
  /** The program and its arguments (no shell). */
  argv: string[];
  /** The lock file, whose content goes into the build's identity. */
  lockFile?: string;
}

const LOCK_FILES: Array<{ file: string; manager: InstallPlan["manager"]; argv: string[] }> = [
  { file: "yarn.lock", manager: "yarn", argv: ["yarn", "install", "--frozen-lockfile"] },
  { file: "pnpm-lock.yaml", manager: "pnpm", argv: ["pnpm", "install", "--frozen-lockfile"] },
  { file: "package-lock.json", manager: "npm", argv: ["npm", "ci"] },
  { file: "bun.lockb", manager: "bun", argv: ["bun", "install"] },
  { file: "bun.lock", manager: "bun", argv: ["bun", "install"] },
];

const PLAIN_INSTALL: Record<string, string[]> = {
  npm: ["npm", "install"],
  yarn: ["yarn", "install"],
  pnpm: ["pnpm", "install"],
  bun: ["bun", "install"],
};

export function planInstall(installDir: string): InstallPlan {
  for (const lock of LOCK_FILES) {
    if (existsSync(join(installDir, lock.file))) {
      return { manager: lock.manager, reason: `${lock.file} found`, argv: lock.argv, lockFile: join(installDir, lock.file) };
    }
  }
  const manifest = join(installDir, "package.json");
  if (!existsSync(manifest)) return { manager: "none", reason: "no package.json", argv: [] };
  const declared = readPackageManager(manifest);
  if (declared && PLAIN_INSTALL[declared]) {
    return { manager: declared as InstallPlan["manager"], reason: `package.json's packageManager is ${declared}`, argv: PLAIN_INSTALL[declared] };
  }
  return { manager: "npm", reason: "no lock file", argv: PLAIN_INSTALL.npm };
}

/** `"pnpm@9.1.0+sha..."` → "pnpm"; anything unreadable → undefined. */
function readPackageManager(manifest: string): string | undefined {
  try {
    const value = (JSON.parse(readFileSync(manifest, "utf8")) as { packageManager?: unknown }).packageManager;
    return typeof value === "string" ? value.split("@")[0] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The program to start for a manager: its own binary when it is on PATH; yarn and pnpm
 * otherwise through corepack (shipped with Node), which fetches them from the npm registry.
 * Undefined when it cannot be run here (bun not installed).
 */
export function resolveManager(argv: readonly string[], onPath: (program: string) => boolean): string[] | undefined {
  const [program, ...rest] = argv;
  if (onPath(program)) return [program, ...rest];
  if (program === "yarn" || program === "pnpm") return onPath("corepack") ? ["corepack", program, ...rest] : undefined;
  return undefined;
}
