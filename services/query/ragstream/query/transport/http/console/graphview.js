// A small force-directed graph drawing in SVG: every node is a <g class="node"> with a
// circle and its name, every relation a <line>. Nodes repel each other (inverse square),
// relations pull their ends to a rest length, a weak pull keeps the drawing centred, and
// the motion cools until it settles. Nodes added later start beside the node they came
// from, so expanding a node grows the drawing where the user is looking.
const SVG = "http://www.w3.org/2000/svg";
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
const REST = 70;
const REPULSION = 18000;
const SPRING = 0.02;
const GRAVITY = 0.006;
const DAMPING = 0.82;

function svg(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  return node;
}

function colour(type) {
  let hash = 0;
  for (const ch of type || "") hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

export class GraphView {
  constructor(element, { onNode, onEdge }) {
    this.svg = element;
    this.onNode = onNode;
    this.onEdge = onEdge;
    this.nodes = new Map();
    this.edges = new Map();
    this.view = { x: 0, y: 0, scale: 1 };
    this.viewport = svg("g", { class: "viewport" });
    this.edgeLayer = svg("g", { class: "edges" });
    this.nodeLayer = svg("g", { class: "nodes" });
    this.viewport.append(this.edgeLayer, this.nodeLayer);
    this.svg.append(this.viewport);
    this.alpha = 0;
    this.frame = null;
    this.fitting = false;
    this.panning();
  }

  clear() {
    this.nodes.clear();
    this.edges.clear();
    this.edgeLayer.replaceChildren();
    this.nodeLayer.replaceChildren();
  }

  // Adds entities ({key, name, type, degree}) and relations ({sourceKey, targetKey, weight})
  // not drawn yet; `near` is the key of the node they grow from.
  add(entities, relations, near) {
    const { width, height } = this.size();
    const origin = this.nodes.get(near) || { x: width / 2, y: height / 2 };
    for (const entity of entities) {
      if (this.nodes.has(entity.key)) continue;
      const angle = Math.random() * 2 * Math.PI;
      const node = { ...entity, x: origin.x + 40 * Math.cos(angle), y: origin.y + 40 * Math.sin(angle), vx: 0, vy: 0 };
      node.element = this.drawNode(node);
      this.nodes.set(entity.key, node);
    }
    for (const relation of relations) {
      const key = `${relation.sourceKey}\u241e${relation.targetKey}`;
      if (this.edges.has(key) || !this.nodes.has(relation.sourceKey) || !this.nodes.has(relation.targetKey)) continue;
      const edge = { ...relation, key, element: svg("line", { class: "edge", "data-key": key }) };
      edge.element.setAttribute("stroke-width", String(1 + Math.log2(1 + (relation.weight || 1))));
      edge.element.addEventListener("click", () => this.onEdge(edge));
      edge.element.append(svg("title"));
      edge.element.firstChild.textContent = `${relation.sourceName} — ${relation.targetName}`;
      this.edgeLayer.append(edge.element);
      this.edges.set(key, edge);
    }
    this.fitting = true;
    this.heat(1);
  }

  // Scales and centres the view on every node once the drawing has settled.
  fit() {
    const nodes = [...this.nodes.values()];
    if (!nodes.length) return;
    const { width, height } = this.size();
    const xs = nodes.map((n) => n.x), ys = nodes.map((n) => n.y);
    const [left, right, top, bottom] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const scale = Math.min(1.5, width / (right - left + 160), height / (bottom - top + 80));
    this.view = { scale, x: width / 2 - scale * (left + right) / 2, y: height / 2 - scale * (top + bottom) / 2 };
  }

  drawNode(node) {
    const group = svg("g", { class: "node", "data-key": node.key, tabindex: "0" });
    const radius = Math.min(22, 6 + 2 * Math.sqrt(node.degree || 0));
    group.append(svg("circle", { r: radius, fill: colour(node.type) }));
    const label = svg("text", { x: radius + 3, y: 4 });
    label.textContent = node.name;
    group.append(label);
    this.dragging(group, node);
    this.nodeLayer.append(group);
    return group;
  }

  mark(key, name) {
    for (const node of this.nodes.values()) node.element.classList.toggle(name, node.key === key);
  }

  size() {
    const box = this.svg.getBoundingClientRect();
    return { width: box.width || 800, height: box.height || 500 };
  }

  heat(alpha) {
    this.alpha = Math.max(this.alpha, alpha);
    if (this.frame === null) this.frame = requestAnimationFrame(() => this.tick());
  }

  tick() {
    this.frame = null;
    const nodes = [...this.nodes.values()];
    const { width, height } = this.size();
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) {
        const a = nodes[i], b = nodes[j];
        let dx = a.x - b.x, dy = a.y - b.y;
        const d2 = Math.max(dx * dx + dy * dy, 25);
        const force = REPULSION / d2 / Math.sqrt(d2);
        a.vx += dx * force; a.vy += dy * force;
        b.vx -= dx * force; b.vy -= dy * force;
      }
    }
    for (const edge of this.edges.values()) {
      const a = this.nodes.get(edge.sourceKey), b = this.nodes.get(edge.targetKey);
      const dx = b.x - a.x, dy = b.y - a.y;
      const d = Math.max(Math.hypot(dx, dy), 1);
      const force = ((d - REST) * SPRING) / d;
      a.vx += dx * force; a.vy += dy * force;
      b.vx -= dx * force; b.vy -= dy * force;
    }
    for (const node of nodes) {
      node.vx = (node.vx + (width / 2 - node.x) * GRAVITY) * DAMPING;
      node.vy = (node.vy + (height / 2 - node.y) * GRAVITY) * DAMPING;
      if (node.held) continue;
      node.x += node.vx * this.alpha;
      node.y += node.vy * this.alpha;
    }
    this.alpha *= 0.985;
    if (this.alpha > 0.02) this.heat(0);
    else if (this.fitting) {
      this.fitting = false;
      this.fit();
    }
    this.render();
  }

  render() {
    for (const node of this.nodes.values()) {
      node.element.setAttribute("transform", `translate(${node.x.toFixed(1)},${node.y.toFixed(1)})`);
    }
    for (const edge of this.edges.values()) {
      const a = this.nodes.get(edge.sourceKey), b = this.nodes.get(edge.targetKey);
      edge.element.setAttribute("x1", a.x.toFixed(1));
      edge.element.setAttribute("y1", a.y.toFixed(1));
      edge.element.setAttribute("x2", b.x.toFixed(1));
      edge.element.setAttribute("y2", b.y.toFixed(1));
    }
    const { x, y, scale } = this.view;
    this.viewport.setAttribute("transform", `translate(${x},${y}) scale(${scale})`);
  }

  // A press that barely moves is a click (expand and show); one that moves drags the node.
  dragging(group, node) {
    group.addEventListener("pointerdown", (event) => {
      event.stopPropagation();
      const start = { x: event.clientX, y: event.clientY, nodeX: node.x, nodeY: node.y };
      let moved = false;
      group.setPointerCapture(event.pointerId);
      const move = (e) => {
        const dx = (e.clientX - start.x) / this.view.scale, dy = (e.clientY - start.y) / this.view.scale;
        if (Math.hypot(dx, dy) > 4) moved = true;
        if (!moved) return;
        node.held = true;
        node.x = start.nodeX + dx;
        node.y = start.nodeY + dy;
        this.heat(0.3);
      };
      const up = () => {
        group.removeEventListener("pointermove", move);
        node.held = false;
        if (!moved) this.onNode(node);
      };
      group.addEventListener("pointermove", move);
      group.addEventListener("pointerup", up, { once: true });
    });
  }

  panning() {
    this.svg.addEventListener("pointerdown", (event) => {
      const start = { x: event.clientX - this.view.x, y: event.clientY - this.view.y };
      const move = (e) => {
        this.view.x = e.clientX - start.x;
        this.view.y = e.clientY - start.y;
        this.render();
      };
      this.svg.addEventListener("pointermove", move);
      this.svg.addEventListener("pointerup", () => this.svg.removeEventListener("pointermove", move), { once: true });
    });
    this.svg.addEventListener("wheel", (event) => {
      event.preventDefault();
      const factor = event.deltaY < 0 ? 1.1 : 1 / 1.1;
      const box = this.svg.getBoundingClientRect();
      const px = event.clientX - box.left, py = event.clientY - box.top;
      this.view.x = px - (px - this.view.x) * factor;
      this.view.y = py - (py - this.view.y) * factor;
      this.view.scale *= factor;
      this.render();
    }, { passive: false });
  }
}
