import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StepFailure } from "../failure.ts";
import { inspectProject } from "./project.ts";
import { workerAdvice, workerRequirements } from "./python-env.ts";
import { planPython } from "./python-build.ts";
import { findInterpreter } from "./python-interpreter.ts";
import { linkPythonEnv, pythonEnvGone, revisionPython } from "./python-link.ts";
import { localImportRoots, namesPythonGraphs, readPythonBuild } from "./python-project.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "slipway-python-project-")));
  roots.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const read = (root: string, config: Record<string, unknown>) => readPythonBuild(config, root, root, "langgraph.json");
const failure = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(StepFailure);
    expect((error as StepFailure).status).toBe("BUILD_FAILED");
    return (error as Error).message;
  }
  throw new Error("expected a BUILD_FAILED");
};

describe("reading a Python project's build keys", () => {
  it("tells Python graphs from JS ones", () => {
    expect(namesPythonGraphs({ a: "./agent.py:graph" })).toBe(true);
    expect(namesPythonGraphs({ a: { path: "my_pkg.graphs:graph" } })).toBe(true);
    expect(namesPythonGraphs({ a: "./src/agent.ts:graph", b: "./src/b.mjs" })).toBe(false);
  });

  it("plans an environment for a JS project whose auth.path or http.app is Python, and none for an all-JS one", () => {
    const root = tree({ "langgraph.json": "{}", "src/agent.ts": "", "auth.py": "" });
    const plan = (config: Record<string, unknown>) => planPython(config, join(root, "langgraph.json"), root, "langgraph.json", process.env);
    const graphs = { agent: "./src/agent.ts:graph" };
    expect(plan({ graphs, dependencies: ["."], auth: { path: "./auth.py:auth" } })?.config.local).toEqual([{ dir: root, shown: ".", kind: "code" }]);
    expect(plan({ graphs, auth: { path: "./src/auth.ts:auth" } })).toBeUndefined();
    expect(plan({ graphs, dependencies: ["."], http: { app: "./src/app.py:app" } })?.config.local).toEqual([{ dir: root, shown: ".", kind: "code" }]);
    expect(plan({ graphs, http: { app: "./src/app.ts:app" } })).toBeUndefined();
    expect(plan({ graphs })).toBeUndefined();
  });

  it("sorts dependencies into local packages, requirement files, code folders and specifiers", () => {
    const root = tree({ "pyproject.toml": "", "libs/a/setup.py": "", "libs/b/requirements.txt": "x", "libs/c/mod.py": "", "pip.conf": "" });
    const config = read(root, {
      dependencies: [".", "./libs/a", "./libs/b", "./libs/c", "langchain-openai>=0.3"],
      python_version: "3.12",
      pip_installer: "uv",
      pip_config_file: "pip.conf",
    });
    expect(config).toEqual({
      pythonVersion: "3.12",
      installer: "uv",
      pipConfigFile: join(root, "pip.conf"),
      requirements: ["langchain-openai>=0.3"],
      local: [
        { dir: root, shown: ".", kind: "package" },
        { dir: join(root, "libs/a"), shown: "./libs/a", kind: "package" },
        { dir: join(root, "libs/b"), shown: "./libs/b", kind: "requirements" },
        { dir: join(root, "libs/c"), shown: "./libs/c", kind: "code" },
      ],
    });
    expect(read(root, {})).toMatchObject({ installer: "auto", requirements: [], local: [] });
  });

  it("refuses each wrong key with its name, and installer options among the dependencies", () => {
    const root = tree({ "agent.py": "" });
    expect(failure(() => read(root, { python_version: 3.11 }))).toMatch(/python_version must be a string such as "3\.11", not 3\.11/);
    expect(failure(() => read(root, { python_version: "3.11.4" }))).toMatch(/python_version must be a string/);
    expect(failure(() => read(root, { pip_installer: "poetry" }))).toMatch(/pip_installer must be "auto", "pip" or "uv", not "poetry"/);
    expect(failure(() => read(root, { pip_config_file: "missing.conf" }))).toMatch(/pip_config_file "missing\.conf" is not a file inside the project/);
    expect(failure(() => read(root, { dependencies: "." }))).toMatch(/dependencies must be a list/);
    expect(failure(() => read(root, { dependencies: ["./nowhere"] }))).toMatch(/dependencies\[0\] "\.\/nowhere" is not a folder of the project/);
    expect(failure(() => read(root, { dependencies: [".", "../.."] }))).toMatch(/dependencies\[1\] "\.\.\/\.\." leaves the source tree/);
    expect(failure(() => read(root, { dependencies: ["--index-url=http://evil"] }))).toMatch(
      /dependencies\[0\] "--index-url=http:\/\/evil" is an installer option/,
    );
  });

  it("makes local folders importable, src/ first", () => {
    const root = tree({ "py/src/pkg/__init__.py": "", "other/mod.py": "" });
    expect(localImportRoots({ dependencies: [".", "./py", "./other", "requests"] }, root)).toEqual([
      root,
      join(root, "py/src"),
      join(root, "py"),
      join(root, "other"),
    ]);
  });

  it("lets a module-path graph through the project check, which leaves it to Python's import", () => {
    const root = tree({ "langgraph.json": JSON.stringify({ graphs: { a: "my_pkg.graphs:graph", b: "./agent.py:graph" } }), "agent.py": "" });
    expect(inspectProject(root, "langgraph.json").configFile).toBe(join(root, "langgraph.json"));
  });
});

describe("finding the interpreter", () => {
  it("fails naming python_version's program when none on the PATH works, and checks what it reports", () => {
    const bin = tree({
      "python3.9": "#!/bin/sh\necho 'pyenv: python3.9: command not found' >&2\nexit 127\n",
      "python3.12": '#!/bin/sh\necho \'["/opt/py/bin/python3.11", "/opt/py", "3.11.9"]\'\n',
    });
    chmodSync(join(bin, "python3.9"), 0o755);
    chmodSync(join(bin, "python3.12"), 0o755);
    const env = { PATH: `${bin}${delimiter}/usr/bin${delimiter}/bin` };
    expect(failure(() => findInterpreter("3.9", env))).toMatch(
      /python_version "3\.9" asks for Python 3\.9, but no working python3\.9 is on this machine's PATH \(python3\.9: pyenv: python3\.9: command not found\)/,
    );
    expect(failure(() => findInterpreter("3.12", env))).toMatch(/no working python3\.12 .*\(python3\.12 is Python 3\.11\.9\)/);
    expect(failure(() => findInterpreter("3.42", env))).toMatch(/python3\.42: not found/);
  });

  it("describes a working interpreter by its real program and installation", () => {
    const found = findInterpreter(undefined, process.env);
    expect(found.version).toMatch(/^3\.\d+\.\d+$/);
    expect(realpathSync(found.executable)).toBe(found.executable);
  });
});

describe("the revision's link to its environment", () => {
  it("gives the agent SLIPWAY_PYTHON, PYTHONPATH and the folders to mount", () => {
    const venv = tree({ "pyvenv.cfg": "home = /opt/python/3.11.7/bin\ninclude-system-site-packages = false\n", "bin/python": "" });
    const build = tree({ "langgraph.json": JSON.stringify({ dependencies: [".", "./py"] }), "py/src/pkg/__init__.py": "", ".venv/bin/python": "stale" });
    expect(linkPythonEnv(join(build, "langgraph.json"), venv)).toBe(true);
    expect(revisionPython(join(build, "langgraph.json"))).toEqual({
      venv,
      env: { SLIPWAY_PYTHON: join(venv, "bin/python"), PYTHONPATH: [build, join(build, "py/src"), join(build, "py")].join(delimiter) },
      readOnly: [venv, "/opt/python/3.11.7"],
    });
  });

  it("is nothing for a project whose .venv is its own folder, or that has none", () => {
    const own = tree({ "langgraph.json": "{}", ".venv/bin/python": "" });
    expect(revisionPython(join(own, "langgraph.json"))).toBeUndefined();
    const none = tree({ "langgraph.json": "{}" });
    symlinkSync(join(none, "gone"), join(none, ".venv"));
    expect(revisionPython(join(none, "langgraph.json"))).toBeUndefined();
    // A build whose environment is gone is built again rather than reused.
    expect(pythonEnvGone(join(none, "langgraph.json"))).toBe(true);
    expect(pythonEnvGone(join(own, "langgraph.json"))).toBe(false);
  });
});

describe("the worker's requirements", () => {
  it("are the LangGraph lines of python/pyproject.toml, and named when the resolver finds the project's pins against them", () => {
    expect(workerRequirements()).toEqual(["langgraph>=1.0,<2", "langchain-core>=1.0,<2"]);
    const pip = [
      "ERROR: Cannot install langgraph<1 and langgraph<2 and >=1.0 because these package versions have conflicting dependencies.",
      "ERROR: ResolutionImpossible: for help visit ...",
    ];
    expect(workerAdvice(pip)).toBe("Slipway's Python worker needs langgraph>=1.0,<2 and langchain-core>=1.0,<2: the project's own pins must allow them.");
    expect(workerAdvice(["ERROR: No matching distribution found for slipway-no-such-package"])).toBeUndefined();
  });
});
