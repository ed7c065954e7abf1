// @ts-check
// Serves the database of this PGlite thread to other processes over a local socket (the
// agent processes of a deployment's revisions; see shared-pglite-host.ts and
// docs/decisions/0011). It runs inside the database thread, so the traffic never passes
// through the main thread's event loop. Frames are a 4-byte big-endian length and a V8
// structured-clone message, as in frames.ts (plain JavaScript here: a worker thread has no
// TypeScript loader); requests are the same operations the parent sends over postMessage.
import { chmodSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { deserialize, serialize } from "node:v8";

const MAX_FRAME = 256 * 1024 * 1024;

/**
 * @param {{
 *   socketPath: string;
 *   schema: string;
 *   handle: (message: Record<string, unknown>) => Promise<unknown>;
 *   subscribe: (channel: string, deliver: (payload: string) => void) => Promise<() => void>;
 *   publish: (channel: string, payload: string) => void;
 *   rollback: (txId: string) => Promise<void>;
 *   plainError: (error: unknown) => Record<string, unknown>;
 * }} options
 * @returns {Promise<{ close(): Promise<void> }>}
 */
export async function serveOnSocket(options) {
  let nextClient = 1;
  /** @type {Set<import("node:net").Socket>} */
  const sockets = new Set();

  rmSync(options.socketPath, { force: true });
  const server = createServer((socket) => {
    const client = nextClient++;
    sockets.add(socket);
    /** Transactions of this client, by its own ids; a client gone mid-transaction is rolled back. */
    const open = new Set();
    /** @type {Array<() => void>} */
    const unsubscribes = [];
    const send = (message) => {
      if (socket.destroyed) return;
      const body = serialize(message);
      const head = Buffer.allocUnsafe(4);
      head.writeUInt32BE(body.length, 0);
      socket.cork();
      socket.write(head);
      socket.write(body);
      socket.uncork();
    };
    const forget = async () => {
      if (!sockets.delete(socket)) return;
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
      for (const txId of [...open]) await options.rollback(txId).catch(() => undefined);
      open.clear();
    };
    socket.on("error", () => undefined);
    socket.on("close", () => void forget());
    send({ hello: { schema: options.schema } });

    /** @param {any} request */
    const serve = async (request) => {
      // Transaction ids are the client's own: scoped by client here.
      const txId = request.txId === undefined ? undefined : `${client}:${request.txId}`;
      switch (request.op) {
        case "listen":
          unsubscribes.push(await options.subscribe(request.channel, (payload) => send({ notify: request.channel, payload })));
          return undefined;
        case "notify":
          options.publish(request.channel, request.payload);
          return undefined;
        case "begin": {
          await options.handle({ op: "begin", txId });
          open.add(txId);
          return undefined;
        }
        case "commit":
        case "rollback":
          open.delete(txId);
          return options.handle({ op: request.op, txId });
        case "query":
          return options.handle({ op: "query", sql: request.sql, params: request.params, txId });
        default:
          throw new Error(`unknown operation ${request.op}`);
      }
    };

    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4) {
        const length = buffered.readUInt32BE(0);
        if (length > MAX_FRAME) return socket.destroy();
        if (buffered.length < 4 + length) break;
        let request;
        try {
          request = deserialize(buffered.subarray(4, 4 + length));
        } catch {
          return socket.destroy();
        }
        buffered = buffered.subarray(4 + length);
        serve(request).then(
          (rows) => send({ id: request.id, rows }),
          (error) => send({ id: request.id, error: options.plainError(error) }),
        );
      }
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => resolve(undefined));
  });
  // Only this user's processes may connect: the socket is the database.
  if (process.platform !== "win32") chmodSync(options.socketPath, 0o600);

  return {
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve(undefined));
        for (const socket of sockets) socket.destroy();
        rmSync(options.socketPath, { force: true });
      });
    },
  };
}
