import { existsSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative, sep } from "node:path";

/** A package import of a project module: where Node finds the package from the module's own folder. */
export interface PackageImport {
  importer: string;
  specifier: string;
}

/**
 * The folder (the project's root or one below it) whose compiled output sees every package
 * the project's modules import in the same node_modules folder as the modules themselves
 * do: the output keeps packages external, so Node resolves them from where it lies. Undefined
 * when no such folder exists (modules that see different copies of one package).
 */
export function choosePlace(root: string, imports: PackageImport[]): string | undefined {
  const wanted = imports
    .map(({ importer, specifier }) => ({ name: packageName(specifier), from: dirname(importer) }))
    .filter((entry): entry is { name: string; from: string } => entry.name !== undefined)
    .map(({ name, from }) => ({ name, dir: packageDir(from, name) }))
    .filter((entry): entry is { name: string; dir: string } => entry.dir !== undefined);
  const candidates = [root];
  for (const { name, dir } of wanted) {
    const holder = dirname(dir.slice(0, dir.length - name.length - 1));
    if (inside(root, holder) && !candidates.includes(holder)) candidates.push(holder);
  }
  return candidates.find((place) => wanted.every(({ name, dir }) => packageDir(place, name) === dir));
}

/** `@scope/name/sub` -> `@scope/name`; undefined for Node's own modules and paths. */
function packageName(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("#") || specifier.includes(":") || isBuiltin(specifier)) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** The folder Node's walk up from `from` finds `node_modules/<name>` in. */
function packageDir(from: string, name: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (!dir.endsWith(`${sep}node_modules`)) {
      const candidate = join(dir, "node_modules", name);
      if (existsSync(candidate)) return candidate;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function inside(root: string, dir: string): boolean {
  const path = relative(root, dir);
  return path === "" || (!path.startsWith("..") && !path.startsWith(sep));
}
