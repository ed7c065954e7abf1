import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The vendor's JS server, `langgraphjs dev` of @langchain/langgraph-cli (which serves
 * @langchain/langgraph-api), as the bench and the side-by-side tests run it. It is
 * never a dependency of Slipway: it is installed from the npm registry on first use
 * into bench/.peer (git-ignored), and reused while its version is the one pinned here.
 */
export const PEER_CLI_VERSION = "1.5.1";
export const PEER_DIR = fileURLToPath(new URL("../../bench/.peer", import.meta.url));

/** Installs the peer unless the pinned version is there already; returns its CLI's path. */
export function installPeer(): string {
  const cli = join(PEER_DIR, "node_modules/.bin/langgraphjs");
  if (installedVersion() === PEER_CLI_VERSION && existsSync(cli)) return cli;
  console.error(`installing @langchain/langgraph-cli@${PEER_CLI_VERSION} into bench/.peer (first run only)`);
  mkdirSync(PEER_DIR, { recursive: true });
  writeFileSync(join(PEER_DIR, "package.json"), JSON.stringify({ name: "slipway-bench-peer", private: true, type: "module" }, null, 2));
  // --ignore-scripts: as npm 11 installs by default. The peer needs none: esbuild
  // (for tsx and the ui bundler) ships its binary as a platform package.
  execFileSync(
    "npm",
    [
      "install",
      "--prefix",
      PEER_DIR,
      "--save-exact",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `@langchain/langgraph-cli@${PEER_CLI_VERSION}`,
    ],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  return cli;
}

function installedVersion(): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(PEER_DIR, "node_modules/@langchain/langgraph-cli/package.json"), "utf8")) as { version: string }).version;
  } catch {
    return undefined;
  }
}
