import { openPglite, type ThreadMemory } from "./pglite.ts";

/**
 * Serves one embedded database (PGlite, which admits a single process per data
 * directory) to several processes over a local socket: the agent processes of a
 * deployment's old and new revision, and its replicas. The host is the one process
 * that opens the directory; clients (`shared-pglite-client.ts`) speak the same
 * query / transaction / LISTEN protocol as the in-process database thread.
 *
 * The serving runs on the database's own thread (pglite-sharing.mjs), so the host's
 * event loop carries none of the traffic. Transactions of different clients are
 * serialised by PGlite, as they are for concurrent callers in one process. A client that
 * goes away mid-transaction has it rolled back, so it cannot leave the database locked.
 * Notifications (SQL NOTIFY, and `notify` requests) reach every client listening on the
 * channel, the sender included, as PostgreSQL delivers them. The socket is mode 0600.
 */
export interface SharedPgliteHost {
  socketPath: string;
  schema: string;
  /** What the database's thread holds (bench/pglite-memory.ts). */
  threadMemory(): Promise<ThreadMemory>;
  close(): Promise<void>;
}

export async function startSharedPgliteHost(options: { dataDir: string; schema: string; socketPath: string; template?: string }): Promise<SharedPgliteHost> {
  // A deployment's database shares its thread with a few others' (decision 0057).
  const db = await openPglite(options.dataDir, options.schema, { template: options.template, shareOn: options.socketPath, shareThread: true });
  let closed: Promise<void> | undefined;
  return {
    socketPath: options.socketPath,
    schema: options.schema,
    threadMemory: () => db.threadMemory(),
    close() {
      closed ??= db.close();
      return closed;
    },
  };
}
