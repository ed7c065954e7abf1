// A graph's drawing (`GET /assistants/{id}/graph`: {nodes, edges}) as an SVG, laid out in
// layers from __start__ down to __end__. Node names and edge labels are set as text
// content, never parsed; no library, nothing fetched.

const SVG = "http://www.w3.org/2000/svg";
const LAYER_GAP = 78;
const NODE_GAP = 28;
const NODE_HEIGHT = 36;
const PAD = 20;
const MAX_LABEL = 28;
let drawings = 0;

function svg(tag, attributes = {}, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, String(value));
  if (text !== undefined) el.textContent = String(text);
  return el;
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

function shortLabel(name) {
  return name.length > MAX_LABEL ? `${name.slice(0, MAX_LABEL - 1)}…` : name;
}

/** The drawing of `graph` as an <svg role="img"> titled `title`, with a text list of its edges beside it. */
export function graphDrawing(graph, title) {
  const nodes = Array.isArray(graph?.nodes) ? graph.nodes : [];
  const edges = Array.isArray(graph?.edges) ? graph.edges : [];
  const { layer } = layers(nodes, edges);
  const rows = [];
  for (const node of nodes) {
    const depth = layer.get(String(node.id)) ?? 0;
    (rows[depth] ??= []).push(node);
  }
  const box = new Map();
  const widthOf = (id) => Math.max(70, shortLabel(id).length * 7.4 + 28);
  const rowWidths = rows.map((row = []) => row.reduce((sum, node) => sum + widthOf(String(node.id)), 0) + NODE_GAP * Math.max(0, row.length - 1));
  const width = Math.max(160, ...rowWidths) + PAD * 2 + 60;
  rows.forEach((row = [], depth) => {
    let x = (width - rowWidths[depth]) / 2;
    for (const node of row) {
      const id = String(node.id);
      box.set(id, { x, y: PAD + depth * LAYER_GAP, w: widthOf(id) });
      x += widthOf(id) + NODE_GAP;
    }
  });
  const height = PAD * 2 + Math.max(1, rows.length) * LAYER_GAP - (LAYER_GAP - NODE_HEIGHT);

  const n = ++drawings;
  const titleId = `graph-title-${n}`;
  const root = svg("svg", { class: "graph", role: "img", "aria-labelledby": titleId, viewBox: `0 0 ${width} ${height}`, width, height });
  root.append(svg("title", { id: titleId }, title));
  const marker = svg("marker", { id: `arrow-${n}`, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow" }));
  const defs = svg("defs");
  defs.append(marker);
  root.append(defs);

  for (const edge of edges) {
    const from = box.get(String(edge.source));
    const to = box.get(String(edge.target));
    if (!from || !to) continue;
    const x1 = from.x + from.w / 2;
    const y1 = from.y + NODE_HEIGHT;
    const x2 = to.x + to.w / 2;
    const y2 = to.y;
    // Downward edges are straight; an edge back up (a loop) bends out to the right.
    const d = y2 > y1
      ? `M${x1},${y1} L${x2},${y2}`
      : `M${from.x + from.w},${from.y + NODE_HEIGHT / 2} C${width - 8},${from.y + NODE_HEIGHT / 2} ${width - 8},${to.y + NODE_HEIGHT / 2} ${to.x + to.w},${to.y + NODE_HEIGHT / 2}`;
    const group = svg("g", { class: edge.conditional ? "edge conditional" : "edge", "data-source": edge.source, "data-target": edge.target });
    group.append(svg("path", { d, "marker-end": `url(#arrow-${n})` }));
    if (typeof edge.data === "string" && edge.data) group.append(svg("text", { x: (x1 + x2) / 2 + 4, y: (y1 + y2) / 2, class: "edge-label" }, shortLabel(edge.data)));
    root.append(group);
  }
  for (const node of nodes) {
    const id = String(node.id);
    const { x, y, w } = box.get(id);
    const kind = id === "__start__" ? "start" : id === "__end__" ? "end" : "step";
    const group = svg("g", { class: `node ${kind}`, "data-id": id });
    group.append(svg("title", {}, id));
    group.append(svg("rect", { x, y, width: w, height: NODE_HEIGHT, rx: kind === "step" ? 6 : NODE_HEIGHT / 2 }));
    group.append(svg("text", { x: x + w / 2, y: y + NODE_HEIGHT / 2, "text-anchor": "middle", "dominant-baseline": "central" }, shortLabel(id)));
    root.append(group);
  }
  return root;
}

/** The edges in words, for screen readers and for copying: "a → b (conditional)". */
export function edgeList(graph) {
  const list = document.createElement("ul");
  list.className = "edges";
  for (const edge of Array.isArray(graph?.edges) ? graph.edges : []) {
    const item = document.createElement("li");
    item.textContent = `${edge.source} → ${edge.target}${edge.conditional ? " (conditional)" : ""}`;
    list.append(item);
  }
  return list;
}
