import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import { create } from "tar";
import { CliFailure } from "./exit.ts";

/**
 * Packs a project directory into the .tar.gz an upload takes: what git would commit
 * (each .gitignore honoured, at any depth), never node_modules, .git, a Python virtual
 * environment (.venv) or bytecode (__pycache__), which the build makes again, nor .slipway
 * (`slipway agent`'s local data) or .slipway-compiled (TypeScript compiled by a start); regular files and
 * folders only. Symbolic links are left out and named (the server refuses an archive with
 * one); so are sockets and other special files.
 */
const WARN_BYTES = 50 * 1024 * 1024;
const MAX_BYTES = 200 * 1024 * 1024;

const NEVER = new Set([".git", "node_modules", ".venv", "__pycache__", ".slipway", ".slipway-compiled"]);

interface ProjectListing {
  /** Folders and files, relative with `/`, each folder before what it holds. */
  entries: string[];
  files: { path: string; bytes: number }[];
  links: string[];
  special: string[];
}

interface PackedProject extends ProjectListing {
  file: string;
  bytes: number;
  /** Removes the archive and its temporary folder. */
  remove(): void;
}

interface Rules {
  /** The folder of the .gitignore, relative ("" for the root). */
  base: string;
  matcher: Ignore;
}

function listProject(dir: string): ProjectListing {
  const listing: ProjectListing = { entries: [], files: [], links: [], special: [] };
  walk(dir, "", [], listing);
  return listing;
}

/** Whether `path` (relative to the project) would be left out by the project's .gitignore files. */
export function isIgnored(dir: string, path: string): boolean {
  const parts = path.split("/");
  const rules: Rules[] = [];
  for (let depth = 0; depth < parts.length; depth++) {
    const base = parts.slice(0, depth).join("/");
    const found = rulesOf(join(dir, base), base);
    if (found) rules.push(found);
    const prefix = parts.slice(0, depth + 1).join("/");
    if (ignoredBy(rules, prefix, depth < parts.length - 1)) return true;
  }
  return false;
}

export async function packProject(dir: string, limits: { warnBytes?: number; maxBytes?: number; warn?: (text: string) => void } = {}): Promise<PackedProject> {
  const listing = listProject(dir);
  if (listing.files.length === 0) throw new CliFailure(`${dir} has no files to upload (after .gitignore)`);
  const folder = mkdtempSync(join(tmpdir(), "slipway-pack-"));
  const file = join(folder, "source.tar.gz");
  const remove = () => rmSync(folder, { recursive: true, force: true });
  try {
    // portable: no owner names or ids; noDirRecurse: exactly the listed entries.
    await create({ gzip: true, file, cwd: dir, portable: true, noDirRecurse: true }, listing.entries);
  } catch (error) {
    remove();
    throw error;
  }
  const bytes = statSync(file).size;
  const maxBytes = limits.maxBytes ?? MAX_BYTES;
  const largest = () =>
    [...listing.files]
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, 3)
      .map((f) => `${f.path} (${formatBytes(f.bytes)})`)
      .join(", ");
  if (bytes > maxBytes) {
    remove();
    throw new CliFailure(
      `the packed project is ${formatBytes(bytes)}, over the ${formatBytes(maxBytes)} an upload may be. ` +
        `Its largest files: ${largest()}. Leave out what the build does not need with .gitignore.`,
    );
  }
  if (bytes > (limits.warnBytes ?? WARN_BYTES)) {
    limits.warn?.(
      `the packed project is ${formatBytes(bytes)}: large uploads are slow. Its largest files: ${largest()}. Does it need them all? (.gitignore leaves files out)`,
    );
  }
  return { ...listing, file, bytes, remove };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function walk(root: string, relative: string, inherited: Rules[], listing: ProjectListing): void {
  const absolute = join(root, relative);
  const own = rulesOf(absolute, relative);
  const rules = own ? [...inherited, own] : inherited;
  const children = readdirSync(absolute, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const child of children) {
    if (NEVER.has(child.name)) continue;
    const path = relative ? `${relative}/${child.name}` : child.name;
    if (ignoredBy(rules, path, child.isDirectory())) continue;
    if (child.isSymbolicLink()) listing.links.push(path);
    else if (child.isDirectory()) {
      listing.entries.push(path);
      walk(root, path, rules, listing);
    } else if (child.isFile()) {
      listing.entries.push(path);
      listing.files.push({ path, bytes: statSync(join(root, path)).size });
    } else listing.special.push(path);
  }
}

function rulesOf(folder: string, base: string): Rules | undefined {
  const file = join(folder, ".gitignore");
  if (!existsSync(file)) return undefined;
  return { base, matcher: ignore().add(readFileSync(file, "utf8")) };
}

/** Git's rule: the deepest .gitignore that says anything about a path decides. */
function ignoredBy(rules: Rules[], path: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const { base, matcher } of rules) {
    const inner = base ? path.slice(base.length + 1) : path;
    const verdict = matcher.test(isDirectory ? `${inner}/` : inner);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}
