import { execFileSync } from "node:child_process";
import { StepFailure } from "../failure.ts";

/** A Python installed on this machine, as it describes itself. */
export interface Interpreter {
  /** The real program (a pyenv shim or a venv's link resolved), which the environment is made from. */
  executable: string;
  /** Its installation (sys.base_prefix): mounted read-only into sandboxes, as the environment links into it. */
  prefix: string;
  /** "3.11.7". */
  version: string;
}

/** What the worker shim needs (python/pyproject.toml's requires-python). */
const MINIMUM = [3, 10];
const DESCRIBE = "import json, os, sys; print(json.dumps([os.path.realpath(sys.executable), sys.base_prefix, '%d.%d.%d' % sys.version_info[:3]]))";

/**
 * The interpreter for `python_version`: `python3.N` from the PATH, run once to see that it
 * works (a pyenv shim for a version that is not selected is on the PATH and fails) and is
 * that version. Without python_version: python3.11 (the vendor's default), else python3.
 */
export function findInterpreter(wanted: string | undefined, env: NodeJS.ProcessEnv): Interpreter {
  const candidates = wanted ? [`python${wanted}`] : ["python3.11", "python3"];
  const tried: string[] = [];
  for (const program of candidates) {
    const found = describe(program, env);
    if (typeof found === "string") {
      tried.push(`${program}: ${found}`);
      continue;
    }
    if (wanted && !found.version.startsWith(`${wanted}.`)) {
      tried.push(`${program} is Python ${found.version}`);
      continue;
    }
    const [major, minor] = found.version.split(".").map(Number);
    if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
      throw new StepFailure(
        "BUILD_FAILED",
        `Python ${found.version} (${program}) is older than ${MINIMUM.join(".")}, the oldest Slipway's Python worker runs on. Set python_version to "3.11" or later.`,
      );
    }
    return found;
  }
  const which = wanted ? `python_version "${wanted}" asks for Python ${wanted}, but` : "the project names Python graphs, but";
  throw new StepFailure(
    "BUILD_FAILED",
    `Preparing the Python environment failed: ${which} no working ${candidates.join(" or ")} is on this machine's PATH (${tried.join("; ")}). ` +
      `Install Python ${wanted ?? "3.11"} where \`slipway up\` runs${wanted ? ", or set python_version to a version that is installed" : ""}.`,
  );
}

/** The interpreter's own account of itself, or why it could not give one. */
function describe(program: string, env: NodeJS.ProcessEnv): Interpreter | string {
  try {
    const out = execFileSync(program, ["-c", DESCRIBE], { env, timeout: 15_000, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
    const [executable, prefix, version] = JSON.parse(out.trim().split("\n").pop()!) as [string, string, string];
    return { executable, prefix, version };
  } catch (error) {
    const failure = error as { code?: string; stderr?: string };
    if (failure.code === "ENOENT") return "not found";
    return (failure.stderr ?? "").trim().split("\n")[0] || "does not run";
  }
}
