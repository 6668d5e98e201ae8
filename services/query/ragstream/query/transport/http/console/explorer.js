// Graph tab: search an entity, draw its neighbourhood, click a node to expand it and read
// its description and source chunks, click a relation to read it.
import { el, get, showError } from "./api.js";
import { GraphView } from "./graphview.js";

const byId = (id) => document.getElementById(id);
let view = null;

function details(...children) {
  byId("details").replaceChildren(...children);
}

function entityDetails(entity, chunks) {
  details(
    el("h3", {}, entity.name),
    el("p", { class: "muted" }, `${entity.type || "untyped"} · ${entity.degree} relations`),
    el("p", { class: "description" }, entity.description),
    el("h4", {}, "Documents"),
    el("ul", {}, ...entity.sourceDocIds.map((d) => el("li", {}, d))),
    el("h4", {}, `Source chunks (${chunks.length})`),
    ...chunks.map((c) => el("div", { class: "chunk" }, el("div", { class: "chunk-head" }, c.filePath || c.docId), el("div", { class: "chunk-text" }, c.content))),
  );
}

async function expand(node) {
  const hops = await get("/v1/graph/neighbourhood", { name: node.key, depth: 1, maxNodes: byId("max-nodes").value });
  view.add(hops.nodes.map((n) => n.entity), hops.relations, node.key);
  node.element.dataset.expanded = "true";
}

async function select(node) {
  view.mark(node.key, "selected");
  try {
    const [found] = await Promise.all([get("/v1/graph/entity", { name: node.key, includeChunks: true }), expand(node)]);
    entityDetails(found.entity, found.chunks);
    showError(null);
  } catch (error) {
    showError(error);
  }
}

async function selectEdge(edge) {
  try {
    const found = await get("/v1/graph/relation", { source: edge.sourceKey, target: edge.targetKey, includeChunks: true });
    const r = found.relation;
    details(
      el("h3", {}, `${r.sourceName} — ${r.targetName}`),
      el("p", { class: "muted" }, `${r.keywords} · weight ${r.weight} · degree ${r.degree}`),
      el("p", { class: "description" }, r.description),
      el("h4", {}, `Source chunks (${found.chunks.length})`),
      ...found.chunks.map((c) => el("div", { class: "chunk" }, el("div", { class: "chunk-head" }, c.filePath || c.docId), el("div", { class: "chunk-text" }, c.content))),
    );
  } catch (error) {
    showError(error);
  }
}

export async function open(name) {
  try {
    const found = await get("/v1/graph/neighbourhood", { name, depth: byId("depth").value, maxNodes: byId("max-nodes").value });
    view.clear();
    const centre = found.nodes[0].entity;
    view.add(found.nodes.map((n) => n.entity), found.relations, null);
    view.nodes.get(centre.key).element.dataset.expanded = "true";
    view.mark(centre.key, "selected");
    const entity = await get("/v1/graph/entity", { name: centre.key, includeChunks: true });
    entityDetails(entity.entity, entity.chunks);
    showError(null);
  } catch (error) {
    showError(error);
  }
}

function hitItem(entity, label) {
  const button = el("button", { class: "link", "data-key": entity.key }, label);
  button.addEventListener("click", () => open(entity.key));
  return el("li", {}, button);
}

async function search(event) {
  event.preventDefault();
  try {
    const found = await get("/v1/graph/entities", { query: byId("entity-query").value, limit: 10 });
    byId("entity-hits-list").replaceChildren(
      ...found.hits.map((h) => hitItem(h.entity, `${h.entity.name} (${h.entity.type})`)),
    );
    if (found.hits.length) await open(found.hits[0].entity.key);
    else showError(new Error("no entity matches"));
  } catch (error) {
    showError(error);
  }
}

export async function refreshTop() {
  try {
    const stats = await get("/v1/graph/stats", { top: 10 });
    byId("top-entities").replaceChildren(...stats.topEntities.map((e) => hitItem(e, `${e.name} · ${e.degree}`)));
  } catch (error) {
    showError(error);
  }
}

// Empties the drawing, the search hits, the best connected entities and the details.
export function clearExplorer() {
  view.clear();
  byId("entity-hits-list").replaceChildren();
  byId("top-entities").replaceChildren();
  details(el("p", { class: "muted" }, "Nothing selected."));
}

export function initExplorer() {
  view = new GraphView(byId("graph-view"), { onNode: select, onEdge: selectEdge });
  window.ragstreamGraph = view; // for debugging from the browser's console
  byId("entity-form").addEventListener("submit", search);
}
