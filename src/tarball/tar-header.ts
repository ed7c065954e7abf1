/**
 * One 512-byte tar header block, read from its bytes (POSIX ustar, with the GNU and pax
 * extensions a packer may write). Read here rather than taken from the tar library, which
 * skips entries of types it does not know (GNU sparse `S`, anything else): an upload's
 * check must see every entry the archive holds, whatever the library would do with it.
 */

export const BLOCK = 512;

/** Entry types by their flag, named as node-tar names them (entryProblem speaks these names). */
const TYPE_NAMES: Record<string, string> = {
  "0": "File",
  "\0": "OldFile",
  "1": "Link",
  "2": "SymbolicLink",
  "3": "CharacterDevice",
  "4": "BlockDevice",
  "5": "Directory",
  "6": "FIFO",
  "7": "ContiguousFile",
  S: "SparseFile",
};

/**
 * Headers that describe the next entry rather than being one: a pax extended header (`x`),
 * a pax global header (`g`), GNU's long path (`L`) and long link path (`K`).
 */
export const META_FLAGS = new Set(["x", "g", "L", "K"]);

export interface RawHeader {
  /** The type flag as written (one character). */
  flag: string;
  /** node-tar's name for it, or `unknown type 'Z'`. */
  type: string;
  path: string;
  size: number;
}

export function isZeroBlock(block: Buffer): boolean {
  for (let i = 0; i < BLOCK; i++) if (block[i] !== 0) return false;
  return true;
}

/** Decodes a header block; undefined when its checksum does not hold (a damaged or non-tar stream). */
export function decodeHeader(block: Buffer): RawHeader | undefined {
  if (!checksumHolds(block)) return undefined;
  const flag = String.fromCharCode(block[156]);
  const name = text(block, 0, 100);
  const ustar = block.subarray(257, 263).toString("latin1") === "ustar\0";
  const prefix = ustar ? text(block, 345, 155) : "";
  return {
    flag,
    type: TYPE_NAMES[flag] ?? `unknown type '${printable(flag)}'`,
    path: prefix ? `${prefix}/${name}` : name,
    size: numberField(block, 124, 12),
  };
}

/** The `path` and `size` records of a pax header's body ("<length> <key>=<value>\n" records). */
export function paxRecords(body: Buffer): { path?: string; size?: number } {
  const found: { path?: string; size?: number } = {};
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const length = Number(body.subarray(at, space).toString("latin1"));
    if (space < 0 || !Number.isInteger(length) || length <= 0 || at + length > body.length) break;
    const record = body.subarray(space + 1, at + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    const key = record.slice(0, equals);
    const value = record.slice(equals + 1);
    if (key === "path") found.path = value;
    if (key === "size" && /^\d+$/.test(value)) found.size = Number(value);
    at += length;
  }
  return found;
}

/** A GNU long name body: the path, up to its first NUL. */
export function longName(body: Buffer): string {
  const end = body.indexOf(0);
  return body.subarray(0, end < 0 ? body.length : end).toString("utf8");
}

function text(block: Buffer, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString("utf8");
}

/** An octal field, or GNU's base-256 (high bit set) for sizes past 8 GiB. */
function numberField(block: Buffer, start: number, length: number): number {
  if (block[start] & 0x80) {
    let value = block[start] & 0x7f;
    for (let i = start + 1; i < start + length; i++) value = value * 256 + block[i];
    return value;
  }
  const raw = block.subarray(start, start + length).toString("latin1");
  const end = raw.indexOf("\0");
  const digits = (end < 0 ? raw : raw.slice(0, end)).trim();
  return digits ? parseInt(digits, 8) || 0 : 0;
}

/** The header's checksum: the sum of its bytes with the checksum field read as spaces (unsigned, or signed as old packers wrote it). */
function checksumHolds(block: Buffer): boolean {
  const stored = numberField(block, 148, 8);
  let unsigned = 8 * 0x20;
  let signed = 8 * 0x20;
  for (let i = 0; i < BLOCK; i++) {
    if (i >= 148 && i < 156) continue;
    unsigned += block[i];
    signed += block[i] > 127 ? block[i] - 256 : block[i];
  }
  return stored === unsigned || stored === signed;
}

function printable(flag: string): string {
  return /^[\x21-\x7e]$/.test(flag) ? flag : `\\x${flag.charCodeAt(0).toString(16).padStart(2, "0")}`;
}
