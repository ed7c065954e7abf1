import type { DockerCli } from "./docker-cli.ts";
import { IMAGE_LABEL, SLIPWAY_ROOT_ID } from "./runtime-image.ts";

/** Children before their parents: a revision image is made on a python layer or a runtime image. */
const ORDER = ["revision", "test", "python", "runtime"];

/**
 * Removes the images this Slipway (this checkout or installation) made on an earlier
 * runtime image, one of an older build of its sources (about 290 MB each, and every
 * revision image on it): each change of Slipway's sources makes a new runtime image,
 * and the old ones would pile up. Kept: every image of the current runtime image, and
 * any image a container (running or not) still uses, itself or through a child. Images
 * of other checkouts on the same dockerd are not this one's to judge. Returns the tags
 * (or ids) removed.
 */
export async function removeStaleImages(docker: DockerCli, currentRuntimeTag: string): Promise<string[]> {
  const ours = await docker.images({ [IMAGE_LABEL.root]: SLIPWAY_ROOT_ID });
  const current = new Set(await docker.images({ [IMAGE_LABEL.root]: SLIPWAY_ROOT_ID, [IMAGE_LABEL.runtime]: currentRuntimeTag }));
  const stale = ours.filter((id) => !current.has(id));
  if (!stale.length) return [];
  const described = (
    await docker.run(["image", "inspect", "--format", `{{.Id}}\t{{index .Config.Labels "${IMAGE_LABEL.kind}"}}\t{{range .RepoTags}}{{.}} {{end}}`, ...stale])
  )
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [id, kind, tags] = line.split("\t");
      const names = (tags ?? "").split(" ").filter(Boolean);
      return { id, kind, names: names.length ? names : [id] };
    })
    .sort((a, b) => rank(a.kind) - rank(b.kind));
  const removed: string[] = [];
  for (const image of described) {
    // `ancestor` matches containers of the image and of every image made on it.
    if ((await docker.run(["ps", "--all", "--quiet", "--filter", `ancestor=${image.id}`]).catch(() => "x")).trim()) continue;
    for (const name of image.names) {
      // Without --force: an image something still needs (a child made meanwhile) stays.
      if (
        await docker.run(["rmi", name]).then(
          () => true,
          () => false,
        )
      )
        removed.push(name);
    }
  }
  return removed;
}

function rank(kind: string): number {
  const index = ORDER.indexOf(kind);
  return Math.max(index, 0);
}
