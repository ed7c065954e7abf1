import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "tar";
import { afterEach, describe, expect, it } from "vitest";
import { checkTarball, entryProblem, TarballRefused, unpackTarball } from "./tarball.ts";
import { TAR_END, tarEntry } from "../../test/support/upload-tarballs.ts";
import { createGzip, gzipSync } from "node:zlib";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});
const scratch = () => {
  const root = mkdtempSync(join(tmpdir(), "slipway-tarball-"));
  roots.push(root);
  return root;
};

/** A pax extended header record ("<length> <key>=<value>\n"). */
function paxRecord(key: string, value: string): string {
  const tail = ` ${key}=${value}\n`;
  let length = tail.length + 1;
  while (`${length}${tail}`.length !== length) length++;
  return `${length}${tail}`;
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
      writeFileSync(file, gzipSync(Buffer.concat([tarEntry("fine.txt"), tarEntry(path), Buffer.alloc(1024)])));
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

  it("refuses entry types node-tar skips: a GNU sparse file (S) and an unknown type (Z)", async () => {
    const root = scratch();
    for (const [flag, why] of [
      ["S", /sparse\.bin: entries of type SparseFile are not allowed/],
      ["Z", /odd: entries of type unknown type 'Z' are not allowed/],
      ["V", /entries of type unknown type 'V'/],
    ] as const) {
      const file = join(root, `type-${flag}.tar.gz`);
      const path = flag === "S" ? "sparse.bin" : "odd";
      writeFileSync(file, gzipSync(Buffer.concat([tarEntry("langgraph.json", "{}"), tarEntry(path, "hidden", flag), tarEntry("after.txt"), TAR_END])));
      await expect(checkTarball(file)).rejects.toThrow(why);
      await expect(unpackTarball(file, join(root, "out"))).rejects.toThrow(TarballRefused);
    }
  });

  it("reads the paths of pax and GNU long-name headers, and entries after a zero block", async () => {
    const root = scratch();
    const long = `${"deep/".repeat(40)}file.ts`;
    const fine = join(root, "long.tar.gz");
    writeFileSync(fine, gzipSync(Buffer.concat([tarEntry("PaxHeader", paxRecord("path", long), "x"), tarEntry("short-name"), TAR_END])));
    expect(await checkTarball(fine)).toEqual({ entries: 1, unpackedBytes: 1 });
    for (const [name, archive] of [
      ["pax", [tarEntry("PaxHeader", paxRecord("path", "../escape.ts"), "x"), tarEntry("innocent.ts")]],
      ["GNU long name", [tarEntry("././@LongLink", "../escape.ts\0", "L"), tarEntry("innocent.ts")]],
      ["after a zero block", [tarEntry("ok.ts"), Buffer.alloc(512), tarEntry("../escape.ts")]],
    ] as const) {
      const file = join(root, "hidden.tar.gz");
      writeFileSync(file, gzipSync(Buffer.concat([...archive, TAR_END])));
      await expect(checkTarball(file), name).rejects.toThrow(/escape\.ts: paths that leave the tree/);
    }
  });

  it("refuses a damaged header and an archive cut short", async () => {
    const root = scratch();
    const damaged = tarEntry("a.txt");
    damaged[0] = "b".charCodeAt(0);
    const file = join(root, "damaged.tar.gz");
    writeFileSync(file, gzipSync(Buffer.concat([damaged, TAR_END])));
    await expect(checkTarball(file)).rejects.toThrow(/checksum/);
    writeFileSync(file, gzipSync(tarEntry("a.txt", "y".repeat(2000)).subarray(0, 1024)));
    await expect(checkTarball(file)).rejects.toThrow(/cut short/);
  });

  it("refuses a decompression bomb by its ratio, while streaming", async () => {
    const root = scratch();
    const file = join(root, "bomb.tar.gz");
    // 192 MiB of zeros after one small file: about 190 KB compressed, over 1000 times smaller.
    async function* zeros() {
      yield tarEntry("langgraph.json", "{}");
      for (let i = 0; i < 192; i++) yield Buffer.alloc(1024 * 1024);
    }
    await pipeline(Readable.from(zeros()), createGzip({ level: 9 }), createWriteStream(file));
    await expect(checkTarball(file)).rejects.toThrow(/expands to more than 128 MB, over 100 times its compressed 0\.\d MB/);
  });

  it("names the problem of an entry", () => {
    expect(entryProblem({ path: "a/b.ts", type: "File" })).toBeUndefined();
    expect(entryProblem({ path: "dev", type: "CharacterDevice" })).toMatch(/CharacterDevice/);
    expect(entryProblem({ path: "C:/x", type: "File" })).toMatch(/absolute/);
  });
});
