// The graph drawing: sigma.js renders a graphology graph (nodes and edges in WebGL, labels
// on a 2D canvas), laid out by ForceAtlas2. The layout is deterministic: every node starts
// at a position derived from its key and ForceAtlas2 runs a fixed number of iterations, so
// the same neighbourhood is drawn the same way each time. Expanding a node places the new
// nodes beside it and lays out only them (the others are pinned with FA2's `fixed`), inside
// the frame of the first drawing, so nothing already on screen moves.
import { Graph, Sigma, drawDiscNodeLabel, forceAtlas2 } from "./vendor/graph-libs.js";
import { DIMMED, typeColour } from "./palette.js";

const LAYOUT_ITERATIONS = 400;
const EXPAND_ITERATIONS = 60;
const LABEL_FONT = 'system-ui, "Noto Sans", "Noto Sans CJK SC", sans-serif';
const LABEL_GAP = 2; // pixels kept free around a label

// A point in [-1, 1]² from the key alone (FNV-1a), the layout's deterministic start.
export function seeded(key) {
  let hash = 2166136261;
  for (const ch of key) hash = Math.imul(hash ^ ch.codePointAt(0), 16777619);
  const x = ((hash >>> 0) % 10007) / 10007;
  const y = ((Math.imul(hash, 2654435761) >>> 0) % 10009) / 10009;
  return { x: 2 * x - 1, y: 2 * y - 1 };
}

// Area grows with degree, so a hub stands out without hiding its neighbours.
export const sizeOf = (degree) => Math.min(22, 4 + 2 * Math.sqrt(degree || 0));

const intersects = (a, b) =>
  a.x < b.x + b.width + LABEL_GAP && b.x < a.x + a.width + LABEL_GAP &&
  a.y < b.y + b.height + LABEL_GAP && b.y < a.y + a.height + LABEL_GAP;

export class GraphView {
  constructor(container, { onNode, onEdge }) {
    this.container = container;
    this.graph = new Graph({ type: "undirected" });
    this.colourBy = "type";
    this.communityOf = new Map(); // entity key -> {id, title, colour}
    this.hiddenTypes = new Set();
    this.focus = null; // keys to highlight (a community, a search), the rest dimmed
    this.selected = null;
    this.hoveredEdge = null;
    this.labels = []; // the label boxes drawn in the last frame, the selected one first
    this.renderer = new Sigma(this.graph, container, {
      allowInvalidContainer: true, // the Graph tab is hidden when the page starts
      renderEdgeLabels: true,
      enableEdgeEvents: true,
      zIndex: true,
      labelFont: LABEL_FONT,
      labelSize: 13,
      labelWeight: "500",
      edgeLabelFont: LABEL_FONT,
      edgeLabelSize: 12,
      labelDensity: 0.8,
      labelGridCellSize: 90,
      labelRenderedSizeThreshold: 5,
      defaultEdgeColor: "#c3c9d4",
      defaultDrawNodeLabel: (context, data, settings) => this.drawLabel(context, data, settings),
      nodeReducer: (key, data) => this.nodeLook(key, data),
      edgeReducer: (key, data) => this.edgeLook(key, data),
    });
    this.renderer.on("beforeRender", () => {
      this.labels = [];
      this.reserved = false;
    });
    this.renderer.on("clickNode", ({ node }) => onNode(node));
    this.renderer.on("clickEdge", ({ edge }) => onEdge(this.graph.source(edge), this.graph.target(edge)));
    this.renderer.on("enterEdge", ({ edge }) => this.hoverEdge(edge));
    this.renderer.on("leaveEdge", () => this.hoverEdge(null));
    this.renderer.on("enterNode", () => (container.style.cursor = "pointer"));
    this.renderer.on("leaveNode", () => (container.style.cursor = ""));
  }

  // Sigma's label grid picks at most a few labels per cell, the biggest nodes first; this
  // drawer then skips any label that would touch one already drawn in the frame, and keeps
  // the boxes it drew (CSS pixels, relative to the container) for `labelBoxes`.
  drawLabel(context, data, settings) {
    if (!this.reserved) this.reserveSelected(context, settings);
    if (!data.label) return;
    context.font = `${settings.labelWeight} ${settings.labelSize}px ${settings.labelFont}`;
    const metrics = context.measureText(data.label);
    const box = {
      key: data.key,
      label: data.label,
      x: data.x + data.size + 3,
      y: data.y + settings.labelSize / 3 - metrics.fontBoundingBoxAscent,
      width: metrics.width,
      height: metrics.fontBoundingBoxAscent + metrics.fontBoundingBoxDescent,
    };
    if (this.labels.some((drawn) => intersects(drawn, box))) return;
    this.labels.push(box);
    drawDiscNodeLabel(context, data, settings);
  }

  // sigma draws the selected (highlighted) node's label on its hover layer, in a white box
  // round the node (drawDiscNodeHover's geometry below); the box is taken first in each
  // frame, so no other label runs under it.
  reserveSelected(context, settings) {
    this.reserved = true;
    const key = this.selected;
    const data = key && this.graph.hasNode(key) ? this.renderer.getNodeDisplayData(key) : null;
    if (!data || data.hidden || !data.label) return;
    const at = this.renderer.framedGraphToViewport(data);
    const radius = Math.max(this.renderer.scaleSize(data.size), settings.labelSize / 2) + 2;
    const half = Math.max(radius, settings.labelSize / 2 + 2);
    context.font = `${settings.labelWeight} ${settings.labelSize}px ${settings.labelFont}`;
    const width = 2 * radius + Math.round(context.measureText(data.label).width + 5);
    this.labels.push({ key, label: data.label, x: at.x - radius, y: at.y - half, width, height: 2 * half, selected: true });
  }

  nodeLook(key, data) {
    const look = { ...data };
    if (this.hiddenTypes.has(data.entityType)) look.hidden = true;
    const community = this.communityOf.get(key);
    if (this.colourBy === "community") look.color = community ? community.colour : DIMMED;
    else look.color = typeColour(data.entityType);
    if (this.focus && !this.focus.has(key)) {
      look.color = DIMMED;
      look.zIndex = 0;
    } else look.zIndex = 1;
    if (key === this.selected) look.highlighted = true;
    return look;
  }

  edgeLook(key, data) {
    const look = { ...data, label: null };
    if (key === this.hoveredEdge) Object.assign(look, { label: data.keywords, forceLabel: true, color: "#2f6fdb", zIndex: 1 });
    return look;
  }

  hoverEdge(edge) {
    this.hoveredEdge = edge;
    this.container.style.cursor = edge ? "pointer" : "";
    this.renderer.refresh();
  }

  clear() {
    this.graph.clear();
    this.renderer.setCustomBBox(null);
    this.selected = this.focus = this.hoveredEdge = null;
    this.renderer.getCamera().setState({ x: 0.5, y: 0.5, ratio: 1, angle: 0 });
  }

  // Adds entities (GetNeighbourhood's) and the relations among drawn ones. Without a
  // parent the whole drawing is laid out afresh and framed; with one, the new nodes start
  // around the parent and only they move.
  add(entities, relations, parent = null) {
    const fresh = entities.filter((e) => !this.graph.hasNode(e.key));
    const anchor = parent && this.graph.hasNode(parent) ? this.graph.getNodeAttributes(parent) : null;
    const spread = anchor ? this.spread() / 12 : 100;
    fresh.forEach((entity, index) => {
      const start = anchor ? around(anchor, index, fresh.length, spread) : scale(seeded(entity.key), spread);
      this.graph.addNode(entity.key, {
        ...start,
        label: entity.name,
        size: sizeOf(entity.degree),
        entityType: entity.type || "untyped",
      });
    });
    for (const r of relations) {
      const ends = [r.sourceKey, r.targetKey];
      if (ends.every((k) => this.graph.hasNode(k)) && !this.graph.hasEdge(...ends) && ends[0] !== ends[1]) {
        this.graph.addEdge(...ends, { keywords: r.keywords || r.description.slice(0, 60), weight: r.weight || 1, size: 1 + Math.min(4, Math.log1p(r.weight || 1)) });
      }
    }
    if (anchor) this.layout(EXPAND_ITERATIONS, new Set(fresh.map((e) => e.key)));
    else this.layout(LAYOUT_ITERATIONS, null);
    return fresh.map((e) => e.key);
  }

  // ForceAtlas2 with the settings it infers for the graph's size, relations pulling by
  // their weight: on the demo's depth-2 neighbourhood this drew relations inside a
  // community 0.55 times as long as those between communities, against 0.65-0.78 for
  // LinLog, hub dissuasion or unweighted relations. `moving`: the only nodes free.
  layout(iterations, moving) {
    if (this.graph.order === 0) return;
    if (moving) this.graph.forEachNode((key) => this.graph.setNodeAttribute(key, "fixed", !moving.has(key)));
    forceAtlas2.assign(this.graph, { iterations, settings: forceAtlas2.inferSettings(this.graph) });
    this.graph.forEachNode((key) => this.graph.removeNodeAttribute(key, "fixed"));
    if (!moving) {
      this.renderer.setCustomBBox(null);
      this.renderer.refresh();
      this.renderer.setCustomBBox(this.renderer.getBBox()); // the frame later nodes draw into
    }
    this.renderer.refresh();
  }

  spread() {
    const { x, y } = this.renderer.getBBox();
    return Math.max(x[1] - x[0], y[1] - y[0], 1);
  }

  refresh() {
    this.renderer.refresh();
  }

  setColourBy(mode, communityOf = this.communityOf) {
    this.colourBy = mode;
    this.communityOf = communityOf;
    this.refresh();
  }

  setHiddenTypes(types) {
    this.hiddenTypes = new Set(types);
    this.refresh();
  }

  setFocus(keys) {
    this.focus = keys && keys.size ? keys : null;
    this.refresh();
  }

  select(key) {
    this.selected = key;
    this.refresh();
  }

  keys() {
    return this.graph.nodes();
  }

  // {type: count} of the drawn nodes.
  types() {
    const counts = {};
    this.graph.forEachNode((_, a) => (counts[a.entityType] = (counts[a.entityType] || 0) + 1));
    return counts;
  }

  // What the page shows, for the browser tests: the label boxes of the last frame, each
  // node's displayed colour, and where a node is (CSS pixels in the page).
  labelBoxes() {
    return this.labels.map((box) => ({ ...box }));
  }

  colours() {
    return Object.fromEntries(this.graph.nodes().map((k) => [k, this.renderer.getNodeDisplayData(k)?.color]));
  }

  positionOf(key) {
    const { x, y } = this.graph.getNodeAttributes(key);
    const at = this.renderer.graphToViewport({ x, y });
    const frame = this.container.getBoundingClientRect();
    return { x: frame.left + at.x, y: frame.top + at.y };
  }

  labelCanvas() {
    return this.renderer.getCanvases().labels;
  }
}

function scale(point, by) {
  return { x: point.x * by, y: point.y * by };
}

// The index-th of n points on a ring around the anchor: new nodes start spread out beside
// the node they came from.
function around(anchor, index, n, radius) {
  const angle = (2 * Math.PI * index) / Math.max(n, 1);
  return { x: anchor.x + radius * Math.cos(angle), y: anchor.y + radius * Math.sin(angle) };
}
