import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, Header } from "tar";
import { afterEach, describe, expect, it } from "vitest";
import { checkTarball, entryProblem, TarballRefused, unpackTarball } from "./tarball.ts";
import { gzipSync } from "node:zlib";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});
const scratch = () => {
  const root = mkdtempSync(join(tmpdir(), "slipway-tarball-"));
  roots.push(root);
  return root;
};

/** A raw tar entry, to write what a friendly packer never would (../, absolute paths). */
function rawEntry(path: string, body = "x"): Buffer {
  const header = Buffer.alloc(512);
  new Header({ path, mode: 0o644, size: Buffer.byteLength(body), type: "File", mtime: new Date(0) }).encode(header, 0);
  const data = Buffer.alloc(Math.ceil(Buffer.byteLength(body) / 512) * 512);
  data.write(body);
  return Buffer.concat([header, data]);
}

describe("uploaded source tarballs", () => {
  it("unpacks regular files and folders", async () => {
    const root = scratch();
    mkdirSync(join(root, "src/nested"), { recursive: true });
    writeFileSync(join(root, "src/nested/a.ts"), "export const a = 1;\n");
    writeFileSync(join(root, "langgraph.json"), "{}");
    const file = join(root, "up.tar.gz");
    await create({ gzip: true, file, cwd: root }, ["src", "langgraph.json"]);
    expect(await checkTarball(file)).toMatchObject({ entries: 4 });
    const out = join(root, "out");
    await unpackTarball(file, out);
    expect(readFileSync(join(out, "src/nested/a.ts"), "utf8")).toBe("export const a = 1;\n");
  });

  it("refuses links, and paths that leave the tree or are absolute", async () => {
    const root = scratch();
    writeFileSync(join(root, "ok.txt"), "fine");
    symlinkSync("/etc/passwd", join(root, "link"));
    const withLink = join(root, "link.tar.gz");
    await create({ gzip: true, file: withLink, cwd: root }, ["ok.txt", "link"]);
    await expect(checkTarball(withLink)).rejects.toThrow(/link: links are not allowed/);

    for (const [path, why] of [
      ["../escape.txt", /leave the tree/],
      ["a/../../escape.txt", /leave the tree/],
      ["/etc/cron.d/x", /absolute paths/],
    ] as const) {
      const file = join(root, "evil.tar.gz");
      writeFileSync(file, gzipSync(Buffer.concat([rawEntry("fine.txt"), rawEntry(path), Buffer.alloc(1024)])));
      const error = await checkTarball(file).catch((e) => e);
      expect(error).toBeInstanceOf(TarballRefused);
      expect((error as Error).message).toMatch(why);
      await expect(unpackTarball(file, join(root, "out"))).rejects.toThrow(TarballRefused);
    }
  });

  it("refuses what is not a gzipped tar, and an empty one", async () => {
    const root = scratch();
    const junk = join(root, "junk.tar.gz");
    writeFileSync(junk, "not a tarball at all");
    await expect(checkTarball(junk)).rejects.toThrow(TarballRefused);
    const empty = join(root, "empty.tar.gz");
    writeFileSync(empty, gzipSync(Buffer.alloc(1024)));
    await expect(checkTarball(empty)).rejects.toThrow(TarballRefused);
  });

  it("names the problem of an entry", () => {
    expect(entryProblem({ path: "a/b.ts", type: "File" })).toBeUndefined();
    expect(entryProblem({ path: "dev", type: "CharacterDevice" })).toMatch(/CharacterDevice/);
    expect(entryProblem({ path: "C:/x", type: "File" })).toMatch(/absolute/);
  });
});
