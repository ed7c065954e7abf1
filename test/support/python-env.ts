import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** What the Python graph suites run on: the LangGraph line the worker is tested with. */
export const PYTHON_TEST_PACKAGES = ["langgraph==1.2.24", "langchain-core==1.8.3"];

/** A virtual environment with PYTHON_TEST_PACKAGES (see ensurePythonEnv); returns its interpreter. */
export function ensurePythonTestEnv(): string {
  return ensurePythonEnv("python-test", PYTHON_TEST_PACKAGES);
}

/**
 * A virtual environment with `packages` from PyPI, made once per machine and kept in the
 * user's cache (SLIPWAY_CACHE_DIR, else ~/.cache/slipway) under `<name>-<key of the
 * packages>`, so that a run after the first installs nothing. Built beside its final
 * place and renamed into it, so a run stopped half-way leaves nothing that looks complete.
 */
export function ensurePythonEnv(name: string, packages: string[]): string {
  const key = createHash("sha256").update(packages.join("\n")).digest("hex").slice(0, 12);
  const cache = process.env.SLIPWAY_CACHE_DIR ?? join(homedir(), ".cache", "slipway");
  const dir = join(cache, `${name}-${key}`);
  makeOnce(dir, (building) => {
    execFileSync(process.env.SLIPWAY_TEST_PYTHON_BASE ?? "python3", ["-m", "venv", building], { stdio: "inherit" });
    execFileSync(join(building, "bin", "python"), ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", ...packages], { stdio: "inherit" });
  });
  return join(dir, "bin", "python");
}

/** Makes `dir` with `make` beside it, then renames it in; a folder already there is kept. */
function makeOnce(dir: string, make: (building: string) => void): void {
  if (existsSync(dir)) return;
  mkdirSync(dirname(dir), { recursive: true });
  const building = `${dir}.tmp-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  make(building);
  try {
    renameSync(building, dir);
  } catch (error) {
    // Another run got there first: theirs is as good.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
}

/**
 * Wheels of PYTHON_TEST_PACKAGES and of a build backend (setuptools), downloaded from
 * PyPI once per machine into the same cache, so that deployment builds in the tests
 * install offline from them (a package cache's python-wheels folder) in seconds.
 */
export function ensurePythonWheelhouse(): string {
  const key = createHash("sha256")
    .update([...PYTHON_TEST_PACKAGES, ...WHEELHOUSE_EXTRAS].join("\n"))
    .digest("hex")
    .slice(0, 12);
  const cache = process.env.SLIPWAY_CACHE_DIR ?? join(homedir(), ".cache", "slipway");
  const dir = join(cache, `python-wheels-${key}`);
  makeOnce(dir, (building) => {
    const args = ["-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--dest", building, ...PYTHON_TEST_PACKAGES, ...WHEELHOUSE_EXTRAS];
    execFileSync(ensurePythonTestEnv(), args, { stdio: "inherit" });
  });
  return dir;
}

const WHEELHOUSE_EXTRAS = ["setuptools>=70", "wheel"];

/** Puts the shared wheels in a package cache's python-wheels folder, where builds install offline from. */
export function seedPythonWheels(packageCache: string): void {
  const wheels = ensurePythonWheelhouse();
  if (existsSync(join(packageCache, "python-wheels"))) return;
  mkdirSync(packageCache, { recursive: true });
  cpSync(wheels, join(packageCache, "python-wheels"), { recursive: true });
}
