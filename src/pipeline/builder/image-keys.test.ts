import { describe, expect, it } from "vitest";
import { LogWriter } from "../log-writer.ts";
import { warnImageKeys } from "./image-keys.ts";

/** The build log's lines in memory (tail), without a database behind them. */
function writer(): LogWriter {
  const sink = { append: async () => undefined, trim: async () => undefined } as unknown as ConstructorParameters<typeof LogWriter>[0];
  return new LogWriter(sink, { workspaceId: "w", deploymentId: "d", revisionId: "r", type: "build" }, []);
}

describe("langgraph.json's image keys in the build log", () => {
  it("says each key that shapes the vendor's container image is ignored", () => {
    const log = writer();
    warnImageKeys(
      { graphs: {}, image_distro: "wolfi", base_image: "my/image:1", api_version: "0.2", keep_pkg_tools: true, dockerfile_lines: ["RUN true"] },
      log,
    );
    const lines = log.tail(10).join("\n");
    for (const key of ["image_distro", "base_image", "api_version", "keep_pkg_tools", "dockerfile_lines"])
      expect(lines).toMatch(new RegExp(`${key} is ignored`));
  });

  it("says nothing for a project without them", () => {
    const log = writer();
    warnImageKeys({ graphs: {}, node_version: "20", dockerfile_lines: [] }, log);
    expect(log.tail(10)).toEqual([]);
  });
});
