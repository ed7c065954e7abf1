import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

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
  const python = join(dir, "bin", "python");
  if (existsSync(python)) return python;
  mkdirSync(cache, { recursive: true });
  const building = `${dir}.tmp-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  execFileSync(process.env.SLIPWAY_TEST_PYTHON_BASE ?? "python3", ["-m", "venv", building], { stdio: "inherit" });
  execFileSync(join(building, "bin", "python"), ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", ...packages], { stdio: "inherit" });
  try {
    renameSync(building, dir);
  } catch (error) {
    // Another run got there first: theirs is as good.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(python)) throw error;
  }
  return python;
}
