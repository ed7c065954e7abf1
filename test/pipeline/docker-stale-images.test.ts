import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerCli } from "../../src/pipeline/runtime/docker/docker-cli.ts";
import { buildImage } from "../../src/pipeline/runtime/docker/image-build.ts";
import { IMAGE_LABEL, SLIPWAY_ROOT_ID } from "../../src/pipeline/runtime/docker/runtime-image.ts";
import { removeStaleImages } from "../../src/pipeline/runtime/docker/stale-images.ts";
import { docker, dockerHost } from "./docker.ts";

/**
 * The images of Slipway's earlier builds (docs/decisions/0030), on the suite's dockerd:
 * tiny images of one file stand for runtime images (labelled as `ensureRuntimeImage`
 * labels them) and images made on them. A change of Slipway's sources is simulated by
 * naming a newer runtime image as the current one.
 */
describe("removing the images of Slipway's earlier builds", () => {
  const run = Math.random().toString(36).slice(2, 10);
  const tag = (name: string) => `slipway-test-stale-${run}:${name}`;
  const older = tag("runtime-old");
  const olderRevision = tag("revision-old");
  const olderInUse = tag("runtime-in-use");
  const current = tag("runtime-current");
  const currentRevision = tag("revision-current");
  const otherCheckout = tag("other-checkout");
  const container = `slipway-test-stale-${run}`;
  let dir: string;
  let cli: DockerCli;

  const runtimeImage = (name: string, root = SLIPWAY_ROOT_ID) =>
    buildImage(cli, {
      tag: name,
      sources: [{ host: join(dir, "file"), inside: "/file" }],
      changes: [`LABEL ${IMAGE_LABEL.kind}=runtime ${IMAGE_LABEL.root}=${root} ${IMAGE_LABEL.runtime}=${name}`],
    });
  // Made on a runtime image, it inherits its labels (as a revision image does).
  const revisionImage = (name: string, from: string) =>
    buildImage(cli, { tag: name, from, sources: [{ host: join(dir, "file"), inside: "/revision" }], changes: [`LABEL ${IMAGE_LABEL.kind}=revision`] });
  const exists = (name: string) => docker(["images", "--quiet", name]).trim() !== "";

  beforeAll(async () => {
    cli = new DockerCli(dockerHost());
    dir = mkdtempSync(join(tmpdir(), "slipway-stale-images-"));
    writeFileSync(join(dir, "file"), "x");
    await runtimeImage(older);
    await revisionImage(olderRevision, older);
    await runtimeImage(olderInUse);
    docker(["create", "--name", container, olderInUse, "/file"]);
    await runtimeImage(current);
    await revisionImage(currentRevision, current);
    await runtimeImage(otherCheckout, "0123456789abcdef");
  }, 120_000);

  afterAll(() => {
    if (docker(["ps", "--all", "--quiet", "--filter", `name=${container}`]).trim()) docker(["rm", "--force", container]);
    for (const name of [olderRevision, older, olderInUse, currentRevision, current, otherCheckout]) if (exists(name)) docker(["rmi", "--force", name]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("removes the older runtime image and what was made on it; keeps the current ones, those a container uses and another checkout's", async () => {
    const removed = await removeStaleImages(cli, current);
    expect(removed).toEqual(expect.arrayContaining([older, olderRevision]));
    expect({ older: exists(older), olderRevision: exists(olderRevision) }).toEqual({ older: false, olderRevision: false });
    expect({
      olderInUse: exists(olderInUse),
      current: exists(current),
      currentRevision: exists(currentRevision),
      otherCheckout: exists(otherCheckout),
    }).toEqual({
      olderInUse: true,
      current: true,
      currentRevision: true,
      otherCheckout: true,
    });
    // Once its container is gone, the next pass removes it too.
    docker(["rm", "--force", container]);
    expect(await removeStaleImages(cli, current)).toEqual([olderInUse]);
  });
});
