import type { CorsConfig } from "../../../http/cors.ts";
import type { AgentEndpoint } from "../agent-endpoint.ts";
import { parseListening } from "../agent-process.ts";
import { answersOk } from "../health-probe.ts";
import type { DockerCli } from "./docker-cli.ts";

/** A running container a previous control plane started, found answering /ok. */
export interface AdoptableContainer {
  id: string;
  /** Its name (without docker's leading slash). */
  name: string;
  endpoint: AgentEndpoint;
  cors: CorsConfig | undefined;
}

interface Inspected {
  Id: string;
  Name: string;
  State: { Running: boolean };
  Config: { Env: string[] | null; Image: string; Labels: Record<string, string> };
}

/**
 * The containers of a revision that a previous control plane of this data directory
 * left running (it was killed, or crashed), if all of them can go on serving as they
 * are (docs/decisions/0030): exactly `count` run, on the image this control plane would
 * start (`runtimeLabel` for Slipway's agent server: the same runtime image; an image
 * source's own image), all with one key for the router, each answering /ok. Anything
 * less and none is adopted: the caller removes them and starts the revision anew.
 */
export async function adoptableContainers(
  docker: DockerCli,
  query: {
    labels: Record<string, string>;
    count: number;
    runtimeLabel: [string, string] | undefined;
    image: string | undefined;
    containerPort: number | undefined;
  },
): Promise<{ internalKey: string; containers: AdoptableContainer[] } | undefined> {
  const ids = await docker.containers(query.labels, { runningOnly: true });
  if (ids.length !== query.count) return undefined;
  const inspected = JSON.parse(await docker.run(["inspect", ...ids])) as Inspected[];
  const keys = new Set(inspected.map((c) => envValue(c, "SLIPWAY_AGENT_API_KEY")));
  const [internalKey] = keys;
  if (keys.size !== 1 || !internalKey) return undefined;
  const containers: AdoptableContainer[] = [];
  for (const container of inspected) {
    const [label, value] = query.runtimeLabel ?? [];
    if (!container.State.Running || (label && container.Config.Labels[label] !== value) || (query.image && container.Config.Image !== query.image))
      return undefined;
    const name = container.Name.replace(/^\//, "");
    const listening = query.containerPort === undefined ? await listeningLine(docker, name) : await publishedPort(docker, name, query.containerPort);
    if (!listening || !(await answersOk(listening.endpoint, 3_000))) return undefined;
    containers.push({ id: container.Id, name, endpoint: listening.endpoint, cors: listening.cors });
  }
  return { internalKey, containers };
}

function envValue(container: Inspected, name: string): string | undefined {
  const entry = (container.Config.Env ?? []).find((item) => item.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

/** Where its agent server said it listens (its `listening` line, in its output since it started). */
async function listeningLine(docker: DockerCli, name: string): Promise<{ endpoint: AgentEndpoint; cors?: CorsConfig } | undefined> {
  const output = await docker.run(["logs", name]).catch(() => "");
  return output.split("\n").map(parseListening).filter(Boolean).at(-1);
}

async function publishedPort(docker: DockerCli, name: string, containerPort: number): Promise<{ endpoint: AgentEndpoint; cors?: CorsConfig } | undefined> {
  const out = await docker.run(["port", name, `${containerPort}/tcp`]).catch(() => "");
  const match = /^127\.0\.0\.1:(\d+)$/m.exec(out);
  return match ? { endpoint: { host: "127.0.0.1", port: Number(match[1]), basePath: "" } } : undefined;
}
