import { chmodSync, chownSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";

/** PostgreSQL's first packets: protocol 3.0's startup, and the requests answered before it. */
const PROTOCOL_3 = 196608;
const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const MAX_STARTUP_BYTES = 10_000;

/** Where the server listens: a TCP port, or its own Unix socket (`.s.PGSQL.<port>` in `host`). */
export type RelayTarget = { host: string; port: number } | { path: string; port: number };

/**
 * The server of a database URL when it is on this machine only (loopback or its Unix
 * socket), which a container cannot reach itself; undefined for a server elsewhere,
 * which containers reach as the control plane does.
 */
export function localServer(databaseUrl: string): RelayTarget | undefined {
  const url = new URL(databaseUrl);
  const port = Number(url.port || url.searchParams.get("port") || 5432);
  const socketDir = url.searchParams.get("host");
  if (socketDir?.startsWith("/")) return { path: join(socketDir, `.s.PGSQL.${port}`), port };
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "") return { path: join("/var/run/postgresql", `.s.PGSQL.${port}`), port };
  return isLoopbackHost(host) ? { host, port } : undefined;
}

/** A host name only this machine (or only this container) answers on. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  return bare === "localhost" || bare === "::1" || bare.startsWith("127.");
}

/**
 * A deployment's way to its PostgreSQL server from a container (docs/decisions/0030): a
 * Unix socket (`.s.PGSQL.<port>`, as libpq and node-postgres name one) in the deployment's
 * own socket directory, which only its containers mount and only its uid may open,
 * forwarding to the server on this machine's loopback, which containers cannot reach
 * themselves. It lets through only sessions that log in as one of the deployment's roles (and
 * cancel requests, which name a session's secret key): whatever else the server would
 * let a local process do (a `trust` line, another role's password found somewhere) is
 * not a container's to try. The socket hop is local, so TLS is declined on it.
 */
export class DatabaseRelay {
  private readonly connections = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly socketPath: string,
  ) {}

  static async open(directory: string, target: RelayTarget, roles: readonly string[], uid: number | undefined): Promise<DatabaseRelay> {
    const socketPath = join(directory, `.s.PGSQL.${target.port}`);
    rmSync(socketPath, { force: true });
    const server = createServer();
    const relay = new DatabaseRelay(server, socketPath);
    server.on("connection", (client) => relay.accept(client, target, roles));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => resolve());
    });
    chmodSync(socketPath, 0o600);
    if (uid !== undefined && uid !== process.getuid?.()) chownSync(socketPath, uid, uid);
    return relay;
  }

  /** The URL an agent in a container connects with: the role's, through this socket. */
  url(roleUrl: string): string {
    const url = new URL(roleUrl);
    const directory = this.socketPath.slice(0, this.socketPath.lastIndexOf("/"));
    url.searchParams.set("host", directory);
    for (const name of ["sslmode", "ssl", "sslcert", "sslkey", "sslrootcert"]) url.searchParams.delete(name);
    return url.toString();
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.socketPath, { force: true });
  }

  private accept(client: Socket, target: RelayTarget, roles: readonly string[]): void {
    this.track(client);
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 8) {
        const length = buffered.readInt32BE(0);
        if (length < 8 || length > MAX_STARTUP_BYTES) return client.destroy();
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        const packet = buffered.subarray(0, length);
        buffered = buffered.subarray(length);
        if (code === SSL_REQUEST || code === GSS_REQUEST) {
          client.write("N");
          continue;
        }
        client.off("data", onData);
        if (code === CANCEL_REQUEST) return this.forward(client, target, packet, buffered);
        if (code !== PROTOCOL_3) return client.destroy();
        const user = startupParameters(packet).user;
        if (!user || !roles.includes(user))
          return refuse(client, `this deployment's database socket logs in as its own role only, not as ${JSON.stringify(user ?? "")}`);
        return this.forward(client, target, packet, buffered);
      }
    };
    client.on("data", onData);
  }

  private forward(client: Socket, target: RelayTarget, ...first: Buffer[]): void {
    const server = "path" in target ? connect(target.path) : connect(target.port, target.host);
    this.track(server);
    for (const bytes of first) if (bytes.length) server.write(bytes);
    client.pipe(server).pipe(client);
    // One side gone (or failed): the session is over.
    server.once("close", () => client.destroy());
    client.once("close", () => server.destroy());
  }

  private track(socket: Socket): void {
    this.connections.add(socket);
    socket.on("error", () => socket.destroy());
    socket.once("close", () => this.connections.delete(socket));
  }
}

/** The startup packet's name/value pairs (after its length and protocol). */
function startupParameters(packet: Buffer): Record<string, string> {
  const parts = packet.subarray(8).toString("utf8").split("\0");
  const parameters: Record<string, string> = {};
  for (let index = 0; index + 1 < parts.length && parts[index]; index += 2) parameters[parts[index]] = parts[index + 1];
  return parameters;
}

/** An ErrorResponse as the server would send it (FATAL, invalid authorization), then the end. */
function refuse(client: Socket, message: string): void {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C28000\0M${message}\0\0`, "utf8");
  const header = Buffer.alloc(5);
  header.write("E", 0);
  header.writeInt32BE(fields.length + 4, 1);
  client.end(Buffer.concat([header, fields]));
}
