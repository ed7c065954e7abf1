import { createServer } from "node:net";

/**
 * Fails when `host:port` cannot be bound right now. A command that does visible work
 * before it listens (`slipway up` creates an organization and prints its key once)
 * checks first, so that a busy port stops it before that work, not after.
 * Port 0 (any free port) always binds.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `port ${port} on ${host} is already in use: stop what holds it, or choose another with --port`
            : `cannot listen on ${host}:${port}: ${error.message}`,
        ),
      );
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
