// A graph's drawing (`GET /assistants/{id}/graph`: {nodes, edges}) as an SVG, placed by
// graph-layout.js. Node names and edge labels are set as text content, never parsed; no
// library, nothing fetched.

import { NODE_HEIGHT, layout, shortLabel } from "./graph-layout.js";

const SVG = "http://www.w3.org/2000/svg";
let drawings = 0;

function svg(tag, attributes = {}, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, String(value));
  if (text !== undefined) el.textContent = String(text);
  return el;
}

/** The drawing of `graph` as an <svg role="img"> titled `title` (the layout comes from graph-layout.js). */
export function graphDrawing(graph, title) {
  const nodes = Array.isArray(graph?.nodes) ? graph.nodes : [];
  const { boxes, edges, width, height } = layout(graph);
  const n = ++drawings;
  const titleId = `graph-title-${n}`;
  const root = svg("svg", { class: "graph", role: "img", "aria-labelledby": titleId, viewBox: `0 0 ${width} ${height}`, width, height });
  root.append(svg("title", { id: titleId }, title));
  const marker = svg("marker", { id: `arrow-${n}`, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow" }));
  const defs = svg("defs");
  defs.append(marker);
  root.append(defs);

  for (const { edge, d, label } of edges) {
    const group = svg("g", { class: edge.conditional ? "edge conditional" : "edge", "data-source": edge.source, "data-target": edge.target });
    group.append(svg("path", { d, "marker-end": `url(#arrow-${n})` }));
    if (typeof edge.data === "string" && edge.data) group.append(svg("text", { x: label.x, y: label.y, class: "edge-label" }, shortLabel(edge.data)));
    root.append(group);
  }
  for (const node of nodes) {
    const id = String(node.id);
    const { x, y, w } = boxes.get(id);
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
