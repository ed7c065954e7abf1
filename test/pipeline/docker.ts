import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { inject } from "vitest";

/**
 * The Docker runtime's tests reach the dockerd the global setup found or started
 * (test/support/dockerd.ts); without docker installed they fail saying so.
 */
export function dockerHost(): string {
  const host = inject("dockerHost");
  if (!host) throw new Error("These tests need Docker: install docker.io (.ci/run does) so that the suite can start dockerd.");
  return host;
}

/** `docker <args>` on the suite's dockerd (argument arrays only). */
export function docker(args: string[]): string {
  return execFileSync("docker", ["--host", dockerHost(), ...args], { encoding: "utf8" });
}

/** The containers carrying a label, as `docker inspect` describes them. */
export function containersLabelled(
  label: string,
  value: string,
): Array<{
  Id: string;
  Name: string;
  State: { Running: boolean };
  Config: { User: string; Labels: Record<string, string> };
  HostConfig: { Memory: number; NanoCpus: number; ReadonlyRootfs: boolean; PidsLimit: number; CapDrop: string[] };
}> {
  const ids = docker(["ps", "--all", "--quiet", "--filter", `label=${label}=${value}`])
    .split("\n")
    .filter(Boolean);
  return ids.length ? JSON.parse(docker(["inspect", ...ids])) : [];
}

/** Removes the revision images a control plane of `dataDir` made (the runtime image, shared, stays). */
export function removeImagesOf(dataDir: string): void {
  const owner = createHash("sha256").update(dataDir).digest("hex").slice(0, 16);
  const ids = [
    ...new Set(
      docker(["images", "--quiet", "--filter", `label=dev.slipway.owner=${owner}`])
        .split("\n")
        .filter(Boolean),
    ),
  ];
  if (ids.length) docker(["rmi", "--force", ...ids]);
}
