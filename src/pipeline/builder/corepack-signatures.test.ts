import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildStepEnv } from "../child-env.ts";
import { installAdvice } from "./package-manager.ts";
import { runCommand } from "./run-command.ts";

/**
 * Behind a registry mirror that strips npm's signatures, corepack refuses the yarn or
 * pnpm it downloads. The real corepack runs here against a stand-in registry on loopback
 * (faked: the only part that cannot run here) whose metadata has no signatures, reached
 * through COREPACK_NPM_REGISTRY in the control plane's environment, as an operator sets it.
 */
let registry: Server;
let url: string;
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "slipway-corepack-"));
  registry = createServer((request, response) => {
    // `/<name>` is the package document, `/<name>/<tag or version>` one version's: neither has dist.signatures.
    const [name = "pnpm", tag] = (request.url ?? "/").split("/").filter(Boolean).map(decodeURIComponent);
    const version = "9.15.0";
    const doc = { name, version, dist: { tarball: `${url}/${name}/-/${name}-${version}.tgz`, shasum: "0", integrity: "sha512-AAAA" } };
    const metadata = tag ? doc : { name, "dist-tags": { latest: version }, versions: { [version]: doc } };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(metadata));
  });
  await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(registry.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => registry.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

describe("corepack behind a registry that strips signatures (stand-in registry on loopback)", () => {
  it("the install fails, and the advice says what to set", async () => {
    writeFileSync(join(root, "package.json"), "{}");
    const env = buildStepEnv(join(root, "cache"), [], `${dirname(process.execPath)}:${process.env.PATH}`, {
      PATH: process.env.PATH,
      HOME: root,
      COREPACK_NPM_REGISTRY: url,
    });
    expect(env.COREPACK_NPM_REGISTRY).toBe(url);
    const lines: string[] = [];
    const outcome = await runCommand("corepack", ["pnpm", "install"], {
      cwd: root,
      env,
      output: (line) => lines.push(line),
      signal: new AbortController().signal,
      timeoutMs: 60_000,
    });
    expect(outcome.code, lines.join("\n")).not.toBe(0);
    expect(lines.join("\n")).toContain("No compatible signature found in package metadata");
    expect(installAdvice(lines)).toMatch(
      /^corepack refused the package manager it downloaded: .*Set COREPACK_INTEGRITY_KEYS=0 in the environment of `slipway up`/,
    );
    expect(installAdvice(["npm error code E404"])).toBeUndefined();
  });
});
