import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { extract } from "tar";
import { afterEach, describe, expect, it } from "vitest";
import { entryProblem } from "../../tarball/tarball.ts";
import { isIgnored, packProject } from "./pack.ts";

/** What `slipway deploy` uploads from a directory, checked by unpacking the real archive. */
describe("packProject", () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function project(files: Record<string, string | Buffer>): string {
    const dir = mkdtempSync(join(tmpdir(), "slipway-pack-test-"));
    made.push(dir);
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    return dir;
  }

  async function unpacked(file: string): Promise<string[]> {
    const into = mkdtempSync(join(tmpdir(), "slipway-unpack-test-"));
    made.push(into);
    const entries: { path: string; type: string }[] = [];
    await extract({ file, cwd: into, onReadEntry: (entry) => void entries.push({ path: entry.path, type: entry.type }) });
    // Everything in it is something the server accepts.
    for (const entry of entries) expect(entryProblem(entry)).toBeUndefined();
    const files: string[] = [];
    const walk = (dir: string, rel: string) => {
      for (const child of readdirSync(dir, { withFileTypes: true })) {
        const path = rel ? `${rel}/${child.name}` : child.name;
        if (child.isDirectory()) walk(join(dir, child.name), path);
        else files.push(path);
      }
    };
    walk(into, "");
    return files.sort();
  }

  it("honours .gitignore files at any depth, leaves out node_modules, .git and links, and names the links", async () => {
    const dir = project({
      "langgraph.json": "{}",
      ".gitignore": "dist/\n*.log\n!keep.log\n.env\n",
      ".env": "SECRET=1",
      "src/agent.ts": "export {}",
      "src/debug.log": "x",
      "src/keep.log": "kept",
      "src/.gitignore": "generated/\n",
      "src/generated/out.ts": "x",
      "dist/index.js": "x",
      "node_modules/a/index.js": "x",
      "packages/lib/node_modules/b/index.js": "x",
      ".git/HEAD": "ref: refs/heads/main",
    });
    symlinkSync("/etc/passwd", join(dir, "passwd"));
    const packed = await packProject(dir);
    try {
      expect(packed.links).toEqual(["passwd"]);
      expect(await unpacked(packed.file)).toEqual([".gitignore", "langgraph.json", "src/.gitignore", "src/agent.ts", "src/keep.log"]);
      expect(readFileSync(join(dir, "src/keep.log"), "utf8")).toBe("kept");
    } finally {
      packed.remove();
    }
    expect(isIgnored(dir, ".env")).toBe(true);
    expect(isIgnored(dir, "src/generated/out.ts")).toBe(true);
    expect(isIgnored(dir, "src/agent.ts")).toBe(false);
  });

  it("leaves out a Python project's virtual environment and bytecode, at any depth, with no .gitignore", async () => {
    const dir = project({
      "langgraph.json": '{"graphs": {"agent": "./agent.py:graph"}}',
      "agent.py": "graph = None",
      "requirements.txt": "langgraph",
      ".venv/bin/python": "x",
      ".venv/lib/python3.11/site-packages/langgraph/__init__.py": "x",
      "__pycache__/agent.cpython-311.pyc": "x",
      "pkg/__init__.py": "",
      "pkg/__pycache__/__init__.cpython-311.pyc": "x",
      "pkg/venv.py": "kept: only the folder named .venv is left out",
    });
    const packed = await packProject(dir);
    try {
      expect(await unpacked(packed.file)).toEqual(["agent.py", "langgraph.json", "pkg/__init__.py", "pkg/venv.py", "requirements.txt"]);
    } finally {
      packed.remove();
    }
  });

  it("leaves out .slipway, where `slipway agent` keeps its local database", async () => {
    const dir = project({
      "langgraph.json": '{"graphs": {"agent": "./agent.mjs:graph"}}',
      "agent.mjs": "export const graph = null;",
      ".slipway/agent/PG_VERSION": "17",
      "sub/.slipway/graph-schemas.json": "{}",
    });
    const packed = await packProject(dir);
    try {
      expect(await unpacked(packed.file)).toEqual(["agent.mjs", "langgraph.json"]);
    } finally {
      packed.remove();
    }
  });

  it("warns above the warning size and refuses above the limit, naming the largest files", async () => {
    // Random bytes do not compress: the archive is about as large as the file.
    const dir = project({ "langgraph.json": "{}", "data/big.bin": randomBytes(300 * 1024) });
    const warnings: string[] = [];
    const packed = await packProject(dir, { warnBytes: 100 * 1024, maxBytes: 1024 * 1024, warn: (text) => warnings.push(text) });
    packed.remove();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/the packed project is 30\d\.\d kB.*data\/big\.bin \(300\.0 kB\)/);
    await expect(packProject(dir, { maxBytes: 200 * 1024 })).rejects.toThrow(/over the 200\.0 kB an upload may be\. Its largest files: data\/big\.bin/);
  });
});
