import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { createInterface } from "node:readline";
import type { CorsConfig } from "../../../http/cors.ts";
import { describeEndpoint, type AgentEndpoint } from "../agent-endpoint.ts";
import type { LogWriter } from "../../log-writer.ts";
import { parseListening } from "../agent-process.ts";
import { RestartBackoff } from "../restart-backoff.ts";
import { answersOk } from "../health-probe.ts";
import type { Replica } from "../runtime.ts";
import type { DockerCli } from "./docker-cli.ts";

export interface ContainerSpec {
  /** For logs: `<revision>#<n>`. */
  name: string;
  /** The container's name (unique on this dockerd). */
  container: string;
  /** `docker run` options (limits, mounts, labels, user), before the image. */
  options: string[];
  image: string;
  /** Its command; none for an image's own. */
  command: string[];
  /** Its environment: names go on the command line (`-e NAME`), values only to the CLI's environment. */
  env: Record<string, string>;
  /**
   * Where the router reaches it: the agent server's Unix socket (in a directory shared
   * with the host, at the same path), which it announces in its `listening` line; or a
   * port of the container published on loopback (an image of the operator's).
   */
  listen: { socketPath: string } | { containerPort: number };
  log: LogWriter;
  serverLog: { warn(object: object, message: string): void };
}

/**
 * One replica as a container, supervised as an agent process is: an attached `docker
 * run` whose output goes to the deploy log, started again with backoff when the
 * container stops unasked (docker's own restart policy would keep restarting it with
 * no word in the deploy log). Memory is bounded by its cgroup: an OOM kill is reported
 * as the local runtime reports it.
 */
export class ContainerReplica implements Replica {
  endpoint: AgentEndpoint | undefined;
  cors: CorsConfig | undefined;
  private child: ChildProcess | undefined;
  private stopping = false;
  private readonly restarts = new RestartBackoff();
  private exited: Promise<void> = Promise.resolve();
  private starting: Promise<void> = Promise.resolve();

  constructor(
    private readonly docker: DockerCli,
    private readonly spec: ContainerSpec,
    private readonly memoryMb: number | undefined,
  ) {}

  start(): void {
    this.starting = this.run().catch((error: Error) => this.spec.log.error(`[${this.spec.name}] could not start: ${error.message}`));
  }

  /**
   * Takes over the container a previous control plane started (it still runs, answering
   * /ok at `endpoint`): its output from now on goes to the deploy log, and when it stops
   * unasked it is started again as any replica.
   */
  adopt(endpoint: AgentEndpoint, cors: CorsConfig | undefined): void {
    const { spec } = this;
    this.endpoint = endpoint;
    this.cors = cors;
    const child = this.docker.spawn(["logs", "--follow", "--since", new Date().toISOString(), spec.container]);
    this.child = child;
    spec.log.info(`[${spec.name}] adopted (container ${spec.container}, still running on ${describeEndpoint(endpoint)}).`);
    this.follow(child);
  }

  private async run(): Promise<void> {
    const { spec } = this;
    if ("socketPath" in spec.listen) rmSync(spec.listen.socketPath, { force: true });
    // A container of the same name left by a control plane that was killed.
    await this.docker.remove([spec.container]);
    if (this.stopping) return;
    const names = Object.keys(spec.env).flatMap((name) => ["--env", name]);
    const child = this.docker.spawn(["run", "--name", spec.container, ...spec.options, ...names, spec.image, ...spec.command], spec.env);
    this.child = child;
    spec.log.info(`[${spec.name}] started (container ${spec.container}).`);
    this.follow(child);
    if ("containerPort" in spec.listen) void this.publishedEndpoint(spec.listen.containerPort);
  }

  /** The container's output into the deploy log, until it ends (an attached `docker run`, or `docker logs --follow` of an adopted one). */
  private follow(child: ChildProcess): void {
    const { spec } = this;
    createInterface({ input: child.stdout! }).on("line", (line) => this.onLine(line));
    createInterface({ input: child.stderr! }).on("line", (line) => spec.log.line("WARNING", line));
    child.on("error", (error) => spec.log.error(`[${spec.name}] docker could not start: ${error.message}`));
    this.exited = new Promise((resolve) => child.once("close", (code) => void this.onExit(code).finally(resolve)));
  }

  private onLine(line: string): void {
    const listening = "socketPath" in this.spec.listen ? parseListening(line) : undefined;
    if (!listening) return void this.spec.log.info(line);
    this.endpoint = listening.endpoint;
    this.cors = listening.cors;
    this.spec.log.info(`[${this.spec.name}] listening on ${describeEndpoint(listening.endpoint)}.`);
  }

  /** The loopback port docker chose for the container's port, once it runs. */
  private async publishedEndpoint(containerPort: number): Promise<void> {
    for (let attempt = 0; attempt < 60 && !this.stopping && this.child; attempt++) {
      const out = await this.docker.run(["port", this.spec.container, `${containerPort}/tcp`]).catch(() => "");
      const match = /^127\.0\.0\.1:(\d+)$/m.exec(out);
      if (match) {
        this.endpoint = { host: "127.0.0.1", port: Number(match[1]), basePath: "" };
        this.spec.log.info(`[${this.spec.name}] published on ${describeEndpoint(this.endpoint)}.`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  private async onExit(code: number | null): Promise<void> {
    const { spec } = this;
    this.endpoint = undefined;
    this.child = undefined;
    const state = await this.docker.run(["inspect", "--format", "{{.State.OOMKilled}} {{.State.ExitCode}}", spec.container]).catch(() => "");
    await this.docker.remove([spec.container]);
    const [oom, exitCode] = state.trim().split(" ");
    if (oom === "true")
      spec.log.error(`[${spec.name}] stopped by its resource limits: it ran out of memory (limit ${this.memoryMb ?? "?"} MB) and was killed.`);
    if (this.stopping) {
      spec.log.info(`[${spec.name}] stopped.`);
      return;
    }
    const delay = this.restarts.next();
    spec.log.error(`[${spec.name}] exited with code ${exitCode ?? code}; restarting in ${delay / 1000} s.`);
    spec.serverLog.warn(
      { container: spec.container, code: exitCode ?? code, oom: oom === "true", restart_in_ms: delay },
      "agent container stopped; restarting",
    );
    this.restarts.schedule(delay, () => {
      if (!this.stopping) this.start();
    });
  }

  healthy(timeoutMs = 1_000): Promise<boolean> {
    return answersOk(this.endpoint, timeoutMs);
  }

  /** Stops claiming new runs (the agent server drains on SIGUSR2: a container has no IPC channel). */
  drain(): void {
    if (this.child) void this.docker.run(["kill", "--signal", "SIGUSR2", this.spec.container]).catch(() => undefined);
  }

  /** A container has no IPC channel to ask: unknown, so deployments on this runtime never sleep (docs/decisions/0039). */
  activity(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  /** SIGTERM (docker stop), SIGKILL after `graceMs`; resolves once the container is gone. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.restarts.cancel();
    await this.starting;
    if (!this.child) return;
    await this.docker.run(["stop", "--time", String(Math.max(1, Math.ceil(graceMs / 1000))), this.spec.container]).catch(() => undefined);
    await this.exited;
  }
}
