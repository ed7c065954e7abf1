import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import type { RevisionPython } from "../../builder/python-link.ts";
import type { DockerCli } from "./docker-cli.ts";
import { buildImage } from "./image-build.ts";
import { sharedLibraries } from "./runtime-image.ts";

/** Where a revision's virtual environment is in its image (its host path may lie under /tmp). */
export const VENV_IN_IMAGE = "/srv/python-env";
/** Parts of the standard library no graph runs: tests, the GUI, the bundled pip wheels, the installation's own packages. */
const STDLIB_LEFT_OUT = ["site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3/tests"];

/** The interpreter a virtual environment was made from, as installed on this machine. */
interface Interpreter {
  /** The real program (its environment's `python` links to it). */
  executable: string;
  /** Its standard library (`<prefix>/lib/python3.N`). */
  stdlib: string;
  /** `<prefix>/lib/libpython3.N.so*` of a shared build (pyenv's): the program loads it. */
  libpython: string[];
}

/**
 * The image a Python revision's image starts from: the runtime image plus, at the same
 * paths as on this machine, the interpreter its environment was made from, its standard
 * library (without tests, GUI and installed packages) and the shared libraries it and
 * its extension modules load. A virtual environment names its interpreter by absolute
 * path (`pyvenv.cfg`'s home, `bin/python`'s link), so the interpreter must be where it
 * was built; the environment itself can move (it is found next to the program). Built once
 * per runtime image and interpreter.
 */
export async function ensurePythonImage(docker: DockerCli, runtimeTag: string, venv: string): Promise<string> {
  const interpreter = interpreterOf(venv);
  const tag = `slipway-python:${createHash("sha256")
    .update(`${runtimeTag}\0${interpreter.executable}\0${statSync(interpreter.executable).mtimeMs}`)
    .digest("hex")
    .slice(0, 16)}`;
  if (await docker.hasImage(tag)) return tag;
  const dynload = join(interpreter.stdlib, "lib-dynload");
  // _tkinter would bring X11 along; tkinter is left out anyway.
  const extensions = existsSync(dynload)
    ? readdirSync(dynload)
        .filter((name) => name.endsWith(".so") && !name.startsWith("_tkinter"))
        .map((name) => join(dynload, name))
    : [];
  const libraries = sharedLibraries(interpreter.executable, ...interpreter.libpython, ...extensions);
  await buildImage(docker, {
    tag,
    from: runtimeTag,
    sources: [...new Set([interpreter.executable, ...interpreter.libpython, interpreter.stdlib, ...libraries])].map((host) => ({ host })),
    exclude: [...STDLIB_LEFT_OUT.map((part) => join(interpreter.stdlib, part)), join(dynload, "_tkinter*")],
    dereference: true,
    changes: ["LABEL dev.slipway.kind=python"],
  });
  return tag;
}

/**
 * What a revision's image adds for its Python graphs: its environment at VENV_IN_IMAGE (its
 * links kept: `bin/python` still names the interpreter), the libraries its extension
 * modules load from the system (wheels bring the rest in their own folders), and the
 * environment that points the agent server there.
 */
export function pythonInRevision(
  python: RevisionPython,
  build: { directory: string; inImage: string },
): {
  sources: Array<{ host: string; inside: string }>;
  env: Record<string, string>;
} {
  const extensions = findExtensions(python.venv);
  const system = sharedLibraries(...extensions).filter((path) => !path.startsWith(`${python.venv}${sep}`));
  const moved = (path: string) =>
    path === build.directory || path.startsWith(`${build.directory}${sep}`) ? join(build.inImage, relative(build.directory, path)) : path;
  const env: Record<string, string> = { SLIPWAY_PYTHON: join(VENV_IN_IMAGE, "bin", "python") };
  if (python.env.PYTHONPATH) env.PYTHONPATH = python.env.PYTHONPATH.split(":").map(moved).join(":");
  return {
    sources: [{ host: python.venv, inside: VENV_IN_IMAGE }, ...system.map((path) => ({ host: realpathSync(path), inside: path }))],
    env,
  };
}

function interpreterOf(venv: string): Interpreter {
  const config = readFileSync(join(venv, "pyvenv.cfg"), "utf8");
  const version = /^version(?:_info)?\s*=\s*(\d+)\.(\d+)/m.exec(config);
  const program = realpathSync(join(venv, "bin", "python"));
  const home = /^home\s*=\s*(.+)$/m.exec(config)?.[1]?.trim() ?? dirname(program);
  const prefix = basename(home) === "bin" ? dirname(home) : home;
  const minor = version ? `${version[1]}.${version[2]}` : /python(\d+\.\d+)$/.exec(program)?.[1];
  const stdlib = join(prefix, "lib", `python${minor}`);
  if (!minor || !existsSync(join(stdlib, "os.py"))) throw new Error(`the interpreter of the Python environment ${venv} has no standard library at ${stdlib}`);
  const lib = join(prefix, "lib");
  const libpython = readdirSync(lib)
    .filter((name) => name.startsWith(`libpython${minor}`) && name.includes(".so"))
    .map((name) => join(lib, name));
  return { executable: program, stdlib, libpython };
}

/** The environment's compiled extension modules (`*.so` under its site-packages). */
function findExtensions(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) findExtensions(path, found);
    else if (entry.isFile() && /\.so(\.|$)/.test(entry.name)) found.push(path);
  }
  return found;
}
