import type { LogWriter } from "../log-writer.ts";

/**
 * Keys of langgraph.json that shape the vendor's container image. Slipway runs the build's
 * output on this machine (or in its own runtime image), so none of them applies: each one
 * a project sets is said in the build log, rather than passed over in silence.
 */
const IMAGE_KEYS: Record<string, string> = {
  image_distro: "the agent runs on this machine's system, or in Slipway's runtime image",
  base_image: "the agent runs on this machine's system, or in Slipway's runtime image",
  api_version: "the agent server is Slipway's own, of the version `slipway --version` prints",
  keep_pkg_tools: "no image is made, so no package tools are removed from one",
};

export function warnImageKeys(config: Record<string, unknown>, log: LogWriter): void {
  const lines = config.dockerfile_lines;
  if (Array.isArray(lines) && lines.length) {
    log.line(
      "WARNING",
      `dockerfile_lines is ignored: Slipway builds no container image, so its ${lines.length} line(s) do not run. ` +
        "Install system packages on the machine that runs `slipway up`, or set source_config.build_command.",
    );
  }
  for (const [key, why] of Object.entries(IMAGE_KEYS)) {
    if (config[key] !== undefined && config[key] !== null) log.line("WARNING", `${key} is ignored: ${why}.`);
  }
}
