import type { Duplex } from "node:stream";

/** Frames on the worker's socket pair: a 4-byte big-endian length, then UTF-8 JSON (docs/python-protocol.md). */

/** A frame past this is a bug on one side, not data: the worker is stopped rather than the buffer grown. */
export const MAX_FRAME_BYTES = 256 * 1024 * 1024;

export function writeFrame(socket: Duplex, message: unknown): boolean {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(body.length, 0);
  return socket.write(Buffer.concat([header, body]));
}

/** Calls `onFrame` for each whole frame read from `socket`; `onError` for a frame it cannot take. */
export function readFrames(socket: Duplex, onFrame: (message: Record<string, unknown>) => void, onError: (error: Error) => void): void {
  let pending: Buffer[] = [];
  let buffered = 0;
  socket.on("data", (chunk: Buffer) => {
    pending.push(chunk);
    buffered += chunk.length;
    let data = pending.length === 1 ? pending[0] : Buffer.concat(pending, buffered);
    let offset = 0;
    while (data.length - offset >= 4) {
      const length = data.readUInt32BE(offset);
      if (length > MAX_FRAME_BYTES) {
        onError(new Error(`the Python worker sent a frame of ${length} bytes, over the limit of ${MAX_FRAME_BYTES}`));
        socket.destroy();
        return;
      }
      if (data.length - offset - 4 < length) break;
      const body = data.subarray(offset + 4, offset + 4 + length);
      offset += 4 + length;
      try {
        onFrame(JSON.parse(body.toString("utf8")) as Record<string, unknown>);
      } catch (error) {
        onError(error as Error);
      }
    }
    data = data.subarray(offset);
    pending = data.length ? [data] : [];
    buffered = data.length;
  });
}
