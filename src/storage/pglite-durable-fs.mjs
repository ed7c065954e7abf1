// @ts-check
// PGlite's files on a real directory, with fsync that reaches the disk (decision 0050).
// PGlite starts PostgreSQL with -F (fsync off), and even without it, the Emscripten
// filesystem it mounts the directory with (NODEFS) has no fsync of its own: PostgreSQL's
// flushes returned at once and what a commit wrote stayed in the kernel's page cache.
// This adds the missing call (fs.fsyncSync on the file's descriptor, or on the directory),
// and DURABLE_START asks PostgreSQL to flush its WAL with fsync() at each commit (its
// default, fdatasync, is a stub that returns 0 in PGlite's libc).
import { closeSync, fsyncSync, openSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { NodeFS } from "@electric-sql/pglite/nodefs";

/** PGlite's own start parameters without -F, and the WAL flushed by fsync(). */
export const DURABLE_START = [...PGlite.defaultStartParams.filter((param) => param !== "-F"), "-c", "wal_sync_method=fsync"];

export class DurableNodeFS extends NodeFS {
  /**
   * @param {string} dataDir
   * @param {(fd: number) => void} sync what flushes a descriptor (tests count the calls)
   */
  constructor(dataDir, sync = fsyncSync) {
    super(dataDir);
    this.sync = sync;
  }

  /** @param {any} pg @param {any} options */
  async init(pg, options) {
    const result = await super.init(pg, options);
    const preRun = result.emscriptenOpts.preRun ?? [];
    const sync = this.sync;
    /** @param {any} module */
    const addFsync = (module) => {
      const nodefs = module.NODEFS;
      /** @param {any} stream */
      nodefs.stream_ops.fsync = (stream) =>
        nodefs.tryFSOperation(() => {
          if (stream.nfd !== undefined) return sync(stream.nfd);
          // A directory (PostgreSQL syncs one after creating or renaming a file in it).
          const fd = openSync(nodefs.realPath(stream.node), "r");
          try {
            sync(fd);
          } finally {
            closeSync(fd);
          }
        });
    };
    result.emscriptenOpts.preRun = [...preRun, addFsync];
    return result;
  }
}

/** Is fsync wanted? On unless the operator turned it off (SLIPWAY_EMBEDDED_FSYNC=off, for throwaway data). */
export function embeddedFsync(env = process.env) {
  return env.SLIPWAY_EMBEDDED_FSYNC !== "off";
}
