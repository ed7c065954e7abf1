import { DockerCli } from "./docker-cli.ts";
import type { DockerSettings } from "./docker-runtime.ts";

/** What `--runtime docker` was given: where dockerd listens and the base image, when not the defaults. */
export interface DockerChoice {
  host?: string;
  baseImage?: string;
}

/** The Docker runtime's settings once dockerd answers, with its version for the start-up line. */
export async function connectDocker(choice: DockerChoice): Promise<{ version: string; settings: DockerSettings }> {
  const docker = new DockerCli(choice.host);
  const version = await docker.serverVersion().catch((error: Error) => {
    throw new Error(`--runtime docker: dockerd cannot be reached (${error.message}). Start it, or name its socket with --docker-host.`);
  });
  return { version, settings: { docker, baseImage: choice.baseImage } };
}
