import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { componentOf, describeEdges, importGraph, isRepository } from "../support/import-graph.ts";

/**
 * The layout rules of docs/architecture.md ("Who may import whom"), checked on the
 * import graph of src/ (tests aside). A failure lists the imports that break a rule.
 */
const edges = importGraph(fileURLToPath(new URL("../../src/", import.meta.url)));
const crossing = (from: (c: string) => boolean, to: (c: string) => boolean) =>
  edges.filter((edge) => from(componentOf(edge.from)) && to(componentOf(edge.to)) && componentOf(edge.from) !== componentOf(edge.to));
const is =
  (...names: string[]) =>
  (component: string) =>
    names.includes(component);

describe("import rules of the control plane", () => {
  it("sees the source tree (the graph is not empty)", () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(edges.some((edge) => edge.from.startsWith("pipeline/") && edge.to.startsWith("controlplane/"))).toBe(true);
  });

  it("pipeline/ and router/ reach no other component's repository: they go through its services", () => {
    const intoRepositories = crossing(is("pipeline", "router"), () => true).filter((edge) => isRepository(edge.to));
    expect(describeEdges(intoRepositories)).toEqual([]);
  });

  it("router/ and pipeline/ do not import each other (one direction at most)", () => {
    const routerToPipeline = crossing(is("router"), is("pipeline"));
    const pipelineToRouter = crossing(is("pipeline"), is("router"));
    const cycle = routerToPipeline.length > 0 && pipelineToRouter.length > 0 ? [...routerToPipeline, ...pipelineToRouter] : [];
    expect(describeEdges(cycle)).toEqual([]);
  });

  it("controlplane/ reaches pipeline/ only where it starts (controlplane/server.ts)", () => {
    const intoPipeline = crossing(is("controlplane"), is("pipeline")).filter((edge) => edge.from !== "controlplane/server.ts");
    expect(describeEdges(intoPipeline)).toEqual([]);
  });

  it("config/ imports no component: the components read their settings from it", () => {
    expect(describeEdges(crossing(is("config"), is("controlplane", "pipeline", "router", "agentserver")))).toEqual([]);
  });

  it("no sideways imports between the control plane (controlplane/, pipeline/, router/) and agentserver/", () => {
    const controlPlane = is("controlplane", "pipeline", "router");
    const sideways = [...crossing(controlPlane, is("agentserver")), ...crossing(is("agentserver"), controlPlane)];
    expect(describeEdges(sideways)).toEqual([]);
  });
});
