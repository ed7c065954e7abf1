import { connect, type Socket } from "node:net";
import type { Database, Queryable } from "./database.ts";
import { readFrames, writeFrame, type HostMessage, type HostRequest } from "./frames.ts";

type Request = HostRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

/**
 * A database served by another process's `SharedPgliteHost` over its socket: the
 * embedded storage of a deployment, shared by the agent processes of its revisions.
 * It behaves like the in-process PGlite handle, except that other processes use the
 * same database at the same time (`shared`), so runs, streams and waiters must be
 * coordinated through it as on a PostgreSQL server.
 *
 * When the host goes away (the control plane stopped), every call fails and `onLost`
 * handlers run: the process has no storage left and should exit.
 */
export async function openSharedPglite(socketPath: string): Promise<Database> {
  const socket: Socket = connect(socketPath);
  const pending = new Map<number, { resolve: (rows: unknown[]) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, Set<(payload: string) => void>>();
  const lostHandlers = new Set<(error: Error) => void>();
  let lost: Error | undefined;
  let nextId = 1;
  let closing = false;

  const schema = await new Promise<string>((resolve, reject) => {
    socket.once("error", (error) => reject(new Error(`cannot reach the shared embedded database at ${socketPath}: ${error.message}`)));
    readFrames(
      socket,
      (raw) => {
        const message = raw as HostMessage;
        if ("hello" in message) return resolve(message.hello.schema);
        if ("notify" in message) {
          for (const listener of [...(listeners.get(message.notify) ?? [])]) {
            try {
              listener(message.payload);
            } catch (error) {
              process.emitWarning(`notification handler for ${message.notify} failed: ${(error as Error).message}`);
            }
          }
          return;
        }
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (!waiter) return;
        if (message.error) waiter.reject(Object.assign(new Error(String(message.error.message)), message.error));
        else waiter.resolve(message.rows ?? []);
      },
      (error) => fail(error),
    );
  });
  socket.on("error", (error) => fail(error));
  socket.on("close", () => fail(new Error("the shared embedded database closed its connection")));

  function fail(error: Error): void {
    if (lost) return;
    lost = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
    if (!closing) for (const handler of lostHandlers) handler(error);
  }

  function call(request: Request): Promise<unknown[]> {
    if (lost) return Promise.reject(lost);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      writeFrame(socket, { ...request, id });
    });
  }

  const query = <Row>(sql: string, params?: readonly unknown[], txId?: number) => call({ op: "query", sql, params: params ?? [], txId }) as Promise<Row[]>;
  let nextTx = 1;

  return {
    kind: "pglite",
    shared: true,
    schema,
    query: (sql, params) => query(sql, params),
    async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      const txId = nextTx++;
      await call({ op: "begin", txId });
      let result: T;
      try {
        result = await work({ query: (sql, params) => query(sql, params, txId) });
      } catch (error) {
        await call({ op: "rollback", txId }).catch(() => undefined);
        throw error;
      }
      await call({ op: "commit", txId });
      return result;
    },
    async listen(channel, onPayload) {
      let set = listeners.get(channel);
      if (!set) {
        set = new Set();
        listeners.set(channel, set);
        await call({ op: "listen", channel });
      }
      set.add(onPayload);
      return async () => {
        set!.delete(onPayload);
      };
    },
    async notify(channel, payload) {
      await call({ op: "notify", channel, payload });
    },
    onReconnect() {
      // The connection is never re-established: losing it ends the process (onLost).
    },
    onLost(handler) {
      lostHandlers.add(handler);
    },
    async close() {
      closing = true;
      socket.end();
      await new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once("close", () => resolve())));
    },
  };
}
