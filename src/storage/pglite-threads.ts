import { Worker } from "node:worker_threads";

/** A reply from a database thread: each names the database it is for. */
export type ThreadReply = { db: number } & Record<string, unknown>;

/** An open database's end of its thread: what it hears, and what tells it the thread is gone. */
export interface ThreadMember {
  hear(reply: ThreadReply): void;
  ended(error: Error): void;
}

/**
 * The young generation of each database thread's JavaScript heap. V8 sizes it for the
 * whole process (16 MB here) and keeps it resident once used: per thread, that was more
 * than anything of the database but its buffers. The thread's objects are short-lived
 * rows and messages; 4 MB collects them as well (bench/pglite-memory.ts, decision 0052).
 */
const THREAD_YOUNG_GENERATION_MB = 4;

/** How many deployment databases share a thread unless SLIPWAY_PGLITE_DATABASES_PER_THREAD says (decision 0057). */
const DEFAULT_DATABASES_PER_THREAD = 8;

/** SLIPWAY_PGLITE_DATABASES_PER_THREAD: a whole number from 1 (a thread each) to 64; anything else is refused by name. */
export function databasesPerThread(env: NodeJS.ProcessEnv = process.env): number {
  const value = env.SLIPWAY_PGLITE_DATABASES_PER_THREAD?.trim() || String(DEFAULT_DATABASES_PER_THREAD);
  const count = /^[0-9]{1,2}$/.test(value) ? Number(value) : Number.NaN;
  if (!(count >= 1 && count <= 64)) {
    throw new Error(`SLIPWAY_PGLITE_DATABASES_PER_THREAD must be a whole number from 1 to 64, not ${JSON.stringify(value.slice(0, 40))}`);
  }
  return count;
}

let nextDatabase = 1;

/** A worker thread (pglite-thread.mjs) hosting one embedded database or several. */
export class DatabaseThread {
  private readonly worker: Worker;
  private readonly members = new Map<number, ThreadMember>();
  private gone: Error | undefined;

  constructor(private readonly forget: (thread: DatabaseThread) => void) {
    this.worker = new Worker(new URL("./pglite-thread.mjs", import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB } });
    this.worker.on("message", (reply: ThreadReply) => this.members.get(reply.db)?.hear(reply));
    this.worker.on("error", (error) => this.end(error));
    this.worker.on("exit", (code) => this.end(new Error(`the embedded database thread stopped (exit code ${code})`)));
  }

  /** How many databases it hosts (or is opening). */
  get size(): number {
    return this.members.size;
  }

  /** A place on this thread for a database, named by the number its messages carry. */
  join(member: ThreadMember): number {
    const db = nextDatabase++;
    this.members.set(db, member);
    return db;
  }

  post(message: Record<string, unknown>): void {
    this.worker.postMessage(message);
  }

  /** The database `db` is closed: its place is free, and a thread left empty ends. */
  async leave(db: number): Promise<void> {
    this.members.delete(db);
    if (this.members.size > 0) return;
    this.forget(this);
    await this.worker.terminate();
  }

  /** Ends the thread now, whatever it runs: every database on it fails (tests stand in for a crash with it). */
  async stop(): Promise<void> {
    await this.worker.terminate();
  }

  /** The thread failed or stopped: every database on it fails with that error. */
  private end(error: Error): void {
    this.gone ??= error;
    this.forget(this);
    const members = [...this.members.values()];
    this.members.clear();
    for (const member of members) member.ended(this.gone);
  }
}

/** Threads that take more deployment databases while they have room. */
const sharedThreads = new Set<DatabaseThread>();

/**
 * Places a database on a thread: alone on a new one (`limit` 1), or on the shared thread
 * with the fewest databases below `limit`, else on a new shared thread. The place is taken
 * at once, so databases opened together are spread.
 */
export function placeDatabase(member: ThreadMember, limit: number): { thread: DatabaseThread; db: number } {
  let thread: DatabaseThread | undefined;
  if (limit > 1) {
    for (const candidate of sharedThreads) {
      if (candidate.size < limit && (!thread || candidate.size < thread.size)) thread = candidate;
    }
  }
  if (!thread) {
    thread = new DatabaseThread((ended) => sharedThreads.delete(ended));
    if (limit > 1) sharedThreads.add(thread);
  }
  return { thread, db: thread.join(member) };
}

/** The shared threads now (tests). */
export function sharedThreadsNow(): readonly DatabaseThread[] {
  return [...sharedThreads];
}

/** How many databases each shared thread hosts now (tests and the memory bench read it). */
export function sharedThreadSizes(): number[] {
  return [...sharedThreads].map((thread) => thread.size);
}
