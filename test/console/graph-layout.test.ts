import { describe, expect, it } from "vitest";

/**
 * The console's graph layout (src/controlplane/console/web/graph-layout.js, plain browser
 * JavaScript without DOM) checked by its geometry: every edge's SVG path, sampled along its
 * lines and curves, stays out of every node box it does not start or end at, and lanes
 * that run side by side keep apart.
 */
interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
  depth: number;
}
interface Edge {
  source: string;
  target: string;
  conditional?: boolean;
}
interface Layout {
  boxes: Map<string, Box>;
  edges: { edge: Edge; d: string }[];
  width: number;
  height: number;
}
type Point = [number, number];

const modulePath = "../../src/controlplane/console/web/graph-layout.js";
const { layout } = (await import(modulePath)) as { layout(graph: { nodes: { id: string }[]; edges: Edge[] }): Layout };

/** Points along an SVG path made of M, L and C commands (absolute), 40 per segment. */
function sample(d: string): Point[] {
  const points: Point[] = [];
  let at: Point = [0, 0];
  for (const [, command, args] of d.matchAll(/([MLC])([^MLC]*)/g)) {
    const n = args
      .trim()
      .split(/[\s,]+/)
      .map(Number);
    if (command === "M") {
      at = [n[0], n[1]];
      points.push(at);
      continue;
    }
    const end: Point = command === "L" ? [n[0], n[1]] : [n[4], n[5]];
    for (let i = 1; i <= 40; i++) {
      const t = i / 40;
      if (command === "L") points.push([at[0] + (end[0] - at[0]) * t, at[1] + (end[1] - at[1]) * t]);
      else {
        const u = 1 - t;
        const bez = (a: number, b: number, c: number, e: number) => u * u * u * a + 3 * u * u * t * b + 3 * u * t * t * c + t * t * t * e;
        points.push([bez(at[0], n[0], n[2], end[0]), bez(at[1], n[1], n[3], end[1])]);
      }
    }
    at = end;
  }
  return points;
}

const inside = ([x, y]: Point, box: Box) => x > box.x + 0.5 && x < box.x + box.w - 0.5 && y > box.y + 0.5 && y < box.y + box.h - 0.5;

/** For each edge, the boxes its path crosses ("source→target: node"); none is expected. */
function crossings(drawn: Layout): string[] {
  const found: string[] = [];
  for (const { edge, d } of drawn.edges) {
    const points = sample(d).slice(1, -1);
    for (const [id, box] of drawn.boxes) {
      if (points.some((point) => inside(point, box))) found.push(`${edge.source}→${edge.target}: ${id}`);
    }
    const outside = points.filter(([x, y]) => x < 0 || y < 0 || x > drawn.width || y > drawn.height);
    if (outside.length) found.push(`${edge.source}→${edge.target}: outside the drawing`);
  }
  return found;
}

const graph = (edges: [string, string, boolean?][]) => {
  const ids = [...new Set(edges.flatMap((edge) => edge.slice(0, 2) as string[]))];
  return { nodes: ids.map((id) => ({ id })), edges: edges.map(([source, target, conditional]) => ({ source, target, conditional: conditional ?? false })) };
};

describe("the console's graph layout", () => {
  it("routes an edge that skips a layer around the node between (ask → __end__ past record)", () => {
    const drawn = layout(
      graph([
        ["__start__", "ask"],
        ["ask", "record", true],
        ["ask", "__end__", true],
        ["record", "__end__"],
      ]),
    );
    expect([...drawn.boxes].map(([id, box]) => `${id}@${box.depth}`)).toEqual(["__start__@0", "ask@1", "record@2", "__end__@3"]);
    expect(crossings(drawn)).toEqual([]);
    // Neighbouring layers keep a straight line; the skipping edge bends.
    const d = (source: string, target: string) => drawn.edges.find(({ edge }) => edge.source === source && edge.target === target)!.d;
    expect(d("ask", "record")).toMatch(/^M[\d.]+,[\d.]+ L[\d.]+,[\d.]+$/);
    expect(d("ask", "__end__")).toContain("C");
  });

  it("keeps every edge of a wider graph, with loops, a self-loop and several skipping edges, off the nodes and its lanes apart", () => {
    const drawn = layout(
      graph([
        ["__start__", "plan"],
        ["__start__", "__end__", true],
        ["plan", "search", true],
        ["plan", "answer_directly_with_a_rather_long_name", true],
        ["plan", "write"],
        ["plan", "__end__", true],
        ["search", "read"],
        ["read", "write"],
        ["read", "read", true],
        ["write", "plan", true],
        ["write", "__end__", true],
        ["answer_directly_with_a_rather_long_name", "__end__"],
        ["search", "__end__", true],
      ]),
    );
    expect(crossings(drawn)).toEqual([]);
    // The lanes (vertical runs) of different edges that overlap in height are apart.
    const runs = drawn.edges.flatMap(({ edge, d }) =>
      [...d.matchAll(/C[^C]*? ([\d.]+),([\d.]+) L([\d.]+),([\d.]+)/g)].map((m) => ({
        edge: `${edge.source}→${edge.target}`,
        x: Number(m[1]),
        top: Math.min(Number(m[2]), Number(m[4])),
        bottom: Math.max(Number(m[2]), Number(m[4])),
      })),
    );
    expect(runs.length).toBeGreaterThanOrEqual(6);
    const close = runs.flatMap((a, i) =>
      runs
        .slice(i + 1)
        .filter((b) => a.top < b.bottom && b.top < a.bottom && Math.abs(a.x - b.x) < 8)
        .map((b) => `${a.edge} ~ ${b.edge}`),
    );
    expect(close).toEqual([]);
  });

  it("routes __start__ → __end__ past a full middle layer", () => {
    const middle = ["a", "b", "c", "d", "e"];
    const drawn = layout(
      graph([
        ...middle.flatMap((id): [string, string][] => [
          ["__start__", id],
          [id, "__end__"],
        ]),
        ["__start__", "__end__", true],
      ]),
    );
    expect(crossings(drawn)).toEqual([]);
  });
});
