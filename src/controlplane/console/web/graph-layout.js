// Where a graph's nodes and edges go (no DOM here: graph-view.js draws what this returns).
// Nodes sit in layers from __start__ down to __end__. An edge between neighbouring layers
// is a straight line; any other edge (one that skips layers, or closes a loop back up) runs
// in a vertical lane that no node of the layers it passes occupies, so it never hides
// behind a node.

export const LAYER_GAP = 78;
export const NODE_GAP = 28;
export const NODE_HEIGHT = 36;
/** Room around the drawing: more than the band a lane bends in below the last layer. */
const PAD = 24;
/** Room kept between a lane and a node's side, and between two lanes side by side. */
const LANE_MARGIN = 8;
const MAX_LABEL = 28;

export function shortLabel(name) {
  return name.length > MAX_LABEL ? `${name.slice(0, MAX_LABEL - 1)}…` : name;
}

/**
 * Layers: each node one below the furthest node that leads to it, edges that close a
 * cycle left out of that count (found by a depth-first walk from __start__); __end__ last.
 */
export function layers(nodes, edges) {
  const ids = nodes.map((node) => String(node.id));
  const out = new Map(ids.map((id) => [id, []]));
  for (const edge of edges) out.get(String(edge.source))?.push(String(edge.target));
  const back = new Set();
  const state = new Map();
  const visit = (id) => {
    state.set(id, "open");
    for (const next of out.get(id) ?? []) {
      if (!out.has(next)) continue;
      if (state.get(next) === "open") back.add(`${id}\u0000${next}`);
      else if (!state.has(next)) visit(next);
    }
    state.set(id, "done");
  };
  for (const id of ["__start__", ...ids]) if (out.has(id) && !state.has(id)) visit(id);

  const layer = new Map(ids.map((id) => [id, 0]));
  // Longest path over the edges that remain (a DAG): at most |nodes| rounds of relaxing.
  for (let round = 0; round < ids.length; round++) {
    let changed = false;
    for (const [source, targets] of out) {
      for (const target of targets) {
        if (back.has(`${source}\u0000${target}`) || !layer.has(target)) continue;
        if (layer.get(target) < layer.get(source) + 1) {
          layer.set(target, layer.get(source) + 1);
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  const deepest = Math.max(0, ...[...layer].filter(([id]) => id !== "__end__").map(([, depth]) => depth));
  if (layer.has("__end__")) layer.set("__end__", Math.max(layer.get("__end__"), deepest + 1));
  return { layer, back };
}

const widthOf = (id) => Math.max(70, shortLabel(id).length * 7.4 + 28);

/**
 * The drawing's geometry: `boxes` (id → {x, y, w, h, depth}), `edges` (each with its SVG
 * path `d` and where its label goes), and the drawing's `width` and `height`.
 */
export function layout(graph) {
  const nodes = Array.isArray(graph?.nodes) ? graph.nodes : [];
  const edgeList = Array.isArray(graph?.edges) ? graph.edges : [];
  const { layer } = layers(nodes, edgeList);
  const rows = [];
  for (const node of nodes) (rows[layer.get(String(node.id)) ?? 0] ??= []).push(node);
  const rowWidths = rows.map((row = []) => row.reduce((sum, node) => sum + widthOf(String(node.id)), 0) + NODE_GAP * Math.max(0, row.length - 1));
  const inner = Math.max(120, ...rowWidths);
  const boxes = new Map();
  rows.forEach((row = [], depth) => {
    let x = (inner - rowWidths[depth]) / 2;
    for (const node of row) {
      const id = String(node.id);
      boxes.set(id, { x, y: depth * LAYER_GAP, w: widthOf(id), h: NODE_HEIGHT, depth });
      x += widthOf(id) + NODE_GAP;
    }
  });

  const lanes = [];
  const routed = [];
  for (const edge of edgeList) {
    const from = boxes.get(String(edge.source));
    const to = boxes.get(String(edge.target));
    if (!from || !to) continue;
    const route = { edge, from, to };
    // Neighbouring layers: nothing lies between them, a straight line is clear.
    if (to.depth !== from.depth + 1) route.lane = pickLane(from, to, [...boxes.values()], lanes);
    routed.push(route);
  }

  // Lanes may pass left of every node: shift everything right so the drawing starts at PAD.
  const left = Math.min(0, ...routed.filter((r) => r.lane !== undefined).map((r) => r.lane - LANE_MARGIN));
  const dx = PAD - left;
  for (const box of boxes.values()) {
    box.x += dx;
    box.y += PAD;
  }
  const right = Math.max(inner, ...routed.filter((r) => r.lane !== undefined).map((r) => r.lane + LANE_MARGIN));
  const edges = routed.map(({ edge, from, to, lane }) => ({ edge, ...path(from, to, lane === undefined ? undefined : lane + dx) }));
  return {
    boxes,
    edges,
    width: right + dx + PAD,
    height: PAD * 2 + Math.max(1, rows.length) * LAYER_GAP - (LAYER_GAP - NODE_HEIGHT),
  };
}

/**
 * The x of a vertical lane for an edge that does not join neighbouring layers: clear of
 * every node in the layers it runs through (the source's and target's included when it
 * goes back up), clear of lanes already taken over the same heights, and the closest such
 * x to the edge's ends (a loop prefers the right-hand side).
 */
function pickLane(from, to, all, lanes) {
  const up = to.depth <= from.depth;
  const top = up ? to.depth : from.depth + 1;
  const bottom = up ? from.depth : to.depth - 1;
  const passed = all.filter((box) => box.depth >= top && box.depth <= bottom);
  const x1 = from.x + from.w / 2;
  const x2 = to.x + to.w / 2;
  const candidates = [x1, x2];
  for (const box of passed) candidates.push(box.x - NODE_GAP / 2, box.x + box.w + NODE_GAP / 2);
  const rightmost = Math.max(...passed.map((box) => box.x + box.w));
  const leftmost = Math.min(...passed.map((box) => box.x));
  // Far lanes: enough of them that lanes already taken cannot block them all.
  for (let k = 0; k <= 2 * lanes.length + 1; k++) {
    candidates.push(rightmost + (k + 2) * LANE_MARGIN, leftmost - (k + 2) * LANE_MARGIN);
  }
  const clear = (x) =>
    passed.every((box) => x <= box.x - LANE_MARGIN || x >= box.x + box.w + LANE_MARGIN) &&
    lanes.every((lane) => lane.bottom < top || lane.top > bottom || Math.abs(lane.x - x) >= LANE_MARGIN);
  const cost = (x) => Math.abs(x - x1) + Math.abs(x - x2) + (up && x < x1 ? 1000 : 0);
  // Beside a candidate, a lane a margin or two over keeps parallel edges apart.
  const spread = candidates.flatMap((x) => [x, x + LANE_MARGIN, x - LANE_MARGIN, x + 2 * LANE_MARGIN, x - 2 * LANE_MARGIN]);
  const lane = spread.filter(clear).sort((a, b) => cost(a) - cost(b))[0];
  lanes.push({ x: lane, top, bottom });
  return lane;
}

/**
 * An edge's path: from the bottom of `from` to the top of `to`. With a lane, it bends into
 * the lane within the empty band below `from`'s layer, runs along it, and bends out within
 * the band above `to`'s layer: no part of it is inside a layer except in its lane.
 */
function path(from, to, lane) {
  const x1 = from.x + from.w / 2;
  const y1 = from.y + from.h;
  const x2 = to.x + to.w / 2;
  const y2 = to.y;
  if (lane === undefined) return { d: `M${x1},${y1} L${x2},${y2}`, label: { x: (x1 + x2) / 2 + 4, y: (y1 + y2) / 2 } };
  const band = (LAYER_GAP - NODE_HEIGHT) / 2;
  const below = y1 + band;
  const above = y2 - band;
  const d = [`M${x1},${y1}`, `C${x1},${below} ${lane},${y1} ${lane},${below}`, `L${lane},${above}`, `C${lane},${y2} ${x2},${above} ${x2},${y2}`].join(" ");
  return { d, label: { x: lane + 4, y: (below + above) / 2 } };
}
