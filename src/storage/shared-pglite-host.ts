import { chmodSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { Queryable } from "./database.ts";
import { plainError, readFrames, writeFrame, type HostRequest } from "./frames.ts";
import { openPglite } from "./pglite.ts";

/**
 * Serves one embedded database (PGlite, which admits a single process per data
 * directory) to several processes over a local socket: the agent processes of a
 * deployment's old and new revision, and its replicas. The host is the one process
 * that opens the directory; clients (`shared-pglite-client.ts`) speak the same
 * query / transaction / LISTEN protocol as the in-process database thread.
 *
 * Transactions of different clients are serialised by PGlite itself, as they are for
 * concurrent callers in one process. A client that goes away mid-transaction has it
 * rolled back, so it cannot leave the database locked. Notifications (SQL NOTIFY, and
 * `notify` requests) reach every client listening on the channel, the sender included,
 * as PostgreSQL delivers them.
 */
export interface SharedPgliteHost {
  socketPath: string;
  schema: string;
  /** Clients connected now. */
  clients(): number;
  close(): Promise<void>;
}

interface Client {
  socket: Socket;
  /** Open transactions by the client's own ids. */
  transactions: Map<number, { tx: Queryable; commit: () => void; rollback: (error: Error) => void; done: Promise<void> }>;
  channels: Set<string>;
}

export async function startSharedPgliteHost(options: { dataDir: string; schema: string; socketPath: string }): Promise<SharedPgliteHost> {
  const db = await openPglite(options.dataDir, options.schema);
  const clients = new Set<Client>();
  const listening = new Map<string, Set<Client>>();

  async function subscribe(client: Client, channel: string): Promise<void> {
    client.channels.add(channel);
    let members = listening.get(channel);
    if (members) {
      members.add(client);
      return;
    }
    members = new Set([client]);
    listening.set(channel, members);
    await db.listen(channel, (payload) => {
      for (const member of listening.get(channel) ?? []) writeFrame(member.socket, { notify: channel, payload });
    });
  }

  function begin(client: Client, txId: number): Promise<void> {
    return new Promise((ready, failed) => {
      let opened = false;
      const done = db.transaction(
        (tx) =>
          new Promise<void>((commit, rollback) => {
            opened = true;
            client.transactions.set(txId, { tx, commit: () => commit(), rollback, done });
            ready();
          }),
      );
      done.catch((error) => {
        if (!opened) failed(error);
      });
    });
  }

  async function finish(client: Client, txId: number, commit: boolean): Promise<void> {
    const open = client.transactions.get(txId);
    if (!open) throw new Error(`no open transaction ${txId}`);
    client.transactions.delete(txId);
    if (commit) {
      open.commit();
      await open.done;
    } else {
      open.rollback(new Error("rolled back by the client"));
      await open.done.catch(() => undefined);
    }
  }

  async function handle(client: Client, request: HostRequest): Promise<unknown[] | undefined> {
    switch (request.op) {
      case "query": {
        const target = request.txId === undefined ? db : client.transactions.get(request.txId)?.tx;
        if (!target) throw new Error(`no open transaction ${request.txId}`);
        return target.query(request.sql, request.params);
      }
      case "begin":
        return void (await begin(client, request.txId));
      case "commit":
        return void (await finish(client, request.txId, true));
      case "rollback":
        return void (await finish(client, request.txId, false));
      case "listen":
        return void (await subscribe(client, request.channel));
      case "notify":
        return void (await db.notify(request.channel, request.payload));
    }
  }

  async function forget(client: Client): Promise<void> {
    if (!clients.delete(client)) return;
    for (const channel of client.channels) listening.get(channel)?.delete(client);
    // A client gone mid-transaction would hold PGlite's lock for ever: roll back.
    for (const txId of [...client.transactions.keys()]) await finish(client, txId, false).catch(() => undefined);
  }

  rmSync(options.socketPath, { force: true });
  const server: Server = createServer((socket) => {
    const client: Client = { socket, transactions: new Map(), channels: new Set() };
    clients.add(client);
    socket.on("error", () => undefined);
    socket.on("close", () => void forget(client));
    writeFrame(socket, { hello: { schema: options.schema } });
    readFrames(
      socket,
      (message) => {
        const request = message as HostRequest;
        handle(client, request).then(
          (rows) => socket.writable && writeFrame(socket, { id: request.id, rows }),
          (error) => socket.writable && writeFrame(socket, { id: request.id, error: plainError(error) }),
        );
      },
      () => void forget(client),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => resolve());
  });
  // Only this user's processes may connect: the socket is the database.
  if (process.platform !== "win32") chmodSync(options.socketPath, 0o600);

  let closed: Promise<void> | undefined;
  return {
    socketPath: options.socketPath,
    schema: options.schema,
    clients: () => clients.size,
    close() {
      closed ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const client of clients) client.socket.destroy();
        });
        for (const client of [...clients]) await forget(client);
        await db.close();
        rmSync(options.socketPath, { force: true });
      })();
      return closed;
    },
  };
}

