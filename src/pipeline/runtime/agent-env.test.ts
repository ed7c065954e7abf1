import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { PipelineDeps } from "../context.ts";
import { agentEnvironment } from "./agent-env.ts";
import type { LaunchSpec } from "./runtime.ts";

const deps = { settings: { stopGraceMs: 10_000 }, publicUrl: () => undefined } as unknown as PipelineDeps;
const spec = (secrets: Record<string, string> = {}, memory_mb?: number): LaunchSpec =>
  ({ workspaceId: "w", deploymentId: "d", revisionId: "r", secrets, resourceSpec: memory_mb ? { memory_mb } : null }) as unknown as LaunchSpec;

/** The young generation's size in MB after enough short-lived garbage to grow it, in a node started with `nodeOptions`. */
function newSpaceMb(nodeOptions: string | undefined): number {
  const script =
    "const keep=[];for(let i=0;i<3e6;i++){keep.push({a:i,b:String(i)});if(keep.length>1000)keep.length=0}" +
    "const s=require('v8').getHeapSpaceStatistics().find(s=>s.space_name==='new_space');console.log(s.space_size/1048576)";
  return Number(execFileSync(process.execPath, ["-e", script], { env: { ...process.env, NODE_OPTIONS: nodeOptions ?? "" } }).toString());
}

describe("an agent process's node options (decision 0053)", () => {
  it("keep its young generation small: node accepts them and the new space stays at 8 MB", () => {
    const { NODE_OPTIONS } = agentEnvironment(deps, spec(), {}, "key", undefined);
    expect(newSpaceMb(NODE_OPTIONS)).toBeLessThanOrEqual(8);
  });

  it("come before the deployment's own NODE_OPTIONS, which win, and resource_spec's memory", () => {
    const { NODE_OPTIONS } = agentEnvironment(deps, spec({ NODE_OPTIONS: "--max-semi-space-size=16" }, 512), {}, "key", 512);
    expect(NODE_OPTIONS).toMatch(/^--max-semi-space-size=4 --max-semi-space-size=16 --max-old-space-size=512$/);
    expect(newSpaceMb(NODE_OPTIONS)).toBeGreaterThan(8);
  });
});
