import { gzipSync } from "node:zlib";
import { Header } from "tar";

/**
 * Hostile tarballs for upload tests, written block by block: what no friendly packer
 * writes, and what the reproductions sent.
 */

/** A tar entry whose header says `flag` (`0` a file, `S` GNU sparse, `Z` unknown...). */
export function tarEntry(path: string, body = "x", flag = "0"): Buffer {
  const header = Buffer.alloc(512);
  new Header({ path, mode: 0o644, size: Buffer.byteLength(body), type: "File", mtime: new Date(0) }).encode(header, 0);
  header[156] = flag.charCodeAt(0);
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
  const data = Buffer.alloc(Math.ceil(Buffer.byteLength(body) / 512) * 512);
  data.write(body);
  return Buffer.concat([header, data]);
}

/** The end of an archive: two zero blocks. */
export const TAR_END = Buffer.alloc(1024);

let zerosMember: Buffer | undefined;

/**
 * A small project, then `gib` GiB of zeros: gzip members of 64 MiB each, concatenated (a
 * valid .gz), about 1 KB compressed per MiB of zeros.
 */
export function gzipBomb(gib: number): Buffer {
  // Half a second of gzip, made once per test file.
  zerosMember ??= gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
  const member = zerosMember;
  const members = Math.round((gib * 1024) / 64);
  return Buffer.concat([gzipSync(tarEntry("langgraph.json", "{}")), ...Array.from({ length: members }, () => member)]);
}

/** `count` empty files in one archive, gzipped. */
export function manyTinyFiles(count: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; i < count; i++) blocks.push(tarEntry(`f/${i}`, ""));
  blocks.push(TAR_END);
  return gzipSync(Buffer.concat(blocks), { level: 6 });
}
