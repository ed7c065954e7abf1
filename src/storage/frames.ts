import type { Socket } from "node:net";
import { deserialize, serialize } from "node:v8";

/**
 * Messages on the shared embedded database's socket: a 4-byte big-endian length, then
 * the message in V8's structured-clone format. Structured clone (not JSON) because rows
 * carry what PGlite hands back in-process: Dates, Uint8Arrays (checkpoint blobs), bigints.
 */

/** Refuse frames beyond this size: a corrupt length must not make us allocate gigabytes. */
const MAX_FRAME = 256 * 1024 * 1024;

export function writeFrame(socket: Socket, message: unknown): boolean {
  const body = serialize(message);
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  socket.cork();
  socket.write(head);
  const flushed = socket.write(body);
  socket.uncork();
  return flushed;
}

/** Calls `onMessage` for each whole frame that arrives on `socket`. */
export function readFrames(socket: Socket, onMessage: (message: unknown) => void, onError: (error: Error) => void): void {
  let buffered: Buffer = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4) {
      const length = buffered.readUInt32BE(0);
      if (length > MAX_FRAME) {
        onError(new Error(`frame of ${length} bytes is larger than the ${MAX_FRAME} allowed`));
        socket.destroy();
        return;
      }
      if (buffered.length < 4 + length) break;
      const body = buffered.subarray(4, 4 + length);
      buffered = buffered.subarray(4 + length);
      let message: unknown;
      try {
        message = deserialize(body);
      } catch (error) {
        onError(error as Error);
        socket.destroy();
        return;
      }
      onMessage(message);
    }
  });
}

/** Requests a client sends; `id` pairs a request with its reply. */
export type HostRequest =
  | { id: number; op: "query"; sql: string; params: readonly unknown[]; txId?: number }
  | { id: number; op: "begin" | "commit" | "rollback"; txId: number }
  | { id: number; op: "listen"; channel: string }
  | { id: number; op: "notify"; channel: string; payload: string };

/** What the host sends: a reply, a notification, or (first) who it is. */
export type HostMessage =
  | { id: number; rows?: unknown[]; error?: Record<string, unknown> }
  | { notify: string; payload: string }
  | { hello: { schema: string } };
