import { BLOCK, decodeHeader, isZeroBlock, longName, META_FLAGS, paxRecords } from "./tar-header.ts";

/** Why an uploaded tarball is refused; the message names the entry or the limit. */
export class TarballRefused extends Error {}

/** An entry of the archive, as the next header and its extended headers describe it. */
export interface WalkedEntry {
  path: string;
  /** node-tar's type name (`File`, `Directory`, `SymbolicLink`, `SparseFile`, `unknown type 'Z'`...). */
  type: string;
  size: number;
}

/** Extended headers hold a path or two; more than this is not a source tree. */
const MAX_META_BYTES = 1024 * 1024;

/**
 * Walks a tar stream fed in chunks of any size and tells `onEntry` of every entry, its
 * data skipped without being kept: memory is one header block plus the extended header
 * being read (at most MAX_META_BYTES), whatever the archive holds. Zero blocks are passed
 * over rather than taken as the end, so nothing after them escapes the check. Throws
 * TarballRefused on a damaged header or an archive cut short.
 */
export class TarWalk {
  private readonly block = Buffer.alloc(BLOCK);
  private filled = 0;
  /** Bytes of the current entry's data (padding included) still to come. */
  private skip = 0;
  private meta: { flag: string; size: number; parts: Buffer[] } | undefined;
  private next: { paxPath?: string; longPath?: string; size?: number } = {};
  private global: { path?: string; size?: number } = {};
  private headers = 0;

  constructor(private readonly onEntry: (entry: WalkedEntry) => void) {}

  write(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        const take = Math.min(this.skip, chunk.length - at);
        this.meta?.parts.push(chunk.subarray(at, at + take));
        this.skip -= take;
        at += take;
        if (this.skip === 0 && this.meta) this.finishMeta();
        continue;
      }
      const take = Math.min(BLOCK - this.filled, chunk.length - at);
      chunk.copy(this.block, this.filled, at, at + take);
      this.filled += take;
      at += take;
      if (this.filled === BLOCK) {
        this.filled = 0;
        this.readHeader();
      }
    }
  }

  /** The stream ended: it must not end inside a header or an entry's data. */
  end(): void {
    if (this.filled > 0 || this.skip > 0) throw new TarballRefused("the archive ends in the middle of an entry (it is cut short)");
  }

  private readHeader(): void {
    if (isZeroBlock(this.block)) return;
    this.headers++;
    const header = decodeHeader(this.block);
    if (!header) throw new TarballRefused(`not a readable tar: header ${this.headers} is damaged (its checksum does not hold)`);
    if (META_FLAGS.has(header.flag)) {
      if (header.size > MAX_META_BYTES) throw new TarballRefused(`an extended header of ${header.size} bytes (more than ${MAX_META_BYTES})`);
      this.meta = { flag: header.flag, size: header.size, parts: [] };
      this.skip = padded(header.size);
      if (this.skip === 0) this.finishMeta();
      return;
    }
    const { next, global } = this;
    const size = next.size ?? global.size ?? header.size;
    this.next = {};
    this.onEntry({ path: next.paxPath ?? next.longPath ?? global.path ?? header.path, type: header.type, size });
    this.skip = padded(size);
  }

  private finishMeta(): void {
    const { flag, size, parts } = this.meta!;
    this.meta = undefined;
    const body = Buffer.concat(parts).subarray(0, size);
    if (flag === "L") this.next.longPath = longName(body);
    if (flag === "x") {
      const { path, size: paxSize } = paxRecords(body);
      if (path !== undefined) this.next.paxPath = path;
      if (paxSize !== undefined) this.next.size = paxSize;
    }
    if (flag === "g") Object.assign(this.global, paxRecords(body));
    // `K` names a link's target: links are refused by their own header.
  }
}

function padded(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}
