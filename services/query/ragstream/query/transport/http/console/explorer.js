// Graph tab: search an entity (matches listed and highlighted as you type), draw its
// neighbourhood, click a node to expand it and read its description, communities and
// source chunks, hover a relation to see its keywords and click it to read it; filter by
// type, colour by type or community, and read a community's report from the list.
import { el, get, showError } from "./api.js";
import { communityDetails, fillCommunities, getCommunity, listCommunities, renderCommunityList, titleOf } from "./communities.js";
import { GraphView } from "./graph.js";
import { renderLegend } from "./legend.js";
import { communityColour } from "./palette.js";

const byId = (id) => document.getElementById(id);
const SEARCH_DELAY_MS = 250;
let view = null;
const state = { communities: new Map(), membership: new Map(), typing: null };

function details(...children) {
  byId("details").replaceChildren(...children);
}

function chunkList(chunks) {
  return chunks.map((c) => el("div", { class: "chunk" }, el("div", { class: "chunk-head" }, c.filePath || c.docId), el("div", { class: "chunk-text" }, c.content)));
}

function communityLinks(communities) {
  return communities.map((c) => {
    const button = el("button", { class: "link", "data-community": c.communityId }, `${titleOf(c)} (level ${c.level})`);
    button.addEventListener("click", () => showCommunity(c.communityId));
    return el("li", {}, button);
  });
}

async function entityDetails(key) {
  const [found, groups] = await Promise.all([
    get("/v1/graph/entity", { name: key, includeChunks: true }),
    get("/v1/graph/entity/communities", { name: key }),
  ]);
  const entity = found.entity;
  details(
    el("h3", {}, entity.name),
    el("p", { class: "muted" }, `${entity.type || "untyped"} · ${entity.degree} relations`),
    ...(entity.aliases?.length ? [el("p", { class: "aliases" }, `Also named: ${entity.aliases.join(", ")}`)] : []),
    el("p", { class: "description" }, entity.description),
    el("h4", {}, "Communities"),
    el("ul", { class: "entity-communities" }, ...communityLinks(groups.communities)),
    el("h4", {}, "Documents"),
    el("ul", {}, ...entity.sourceDocIds.map((d) => el("li", {}, d))),
    el("h4", {}, `Source chunks (${found.chunks.length})`),
    ...chunkList(found.chunks),
  );
}

function redrawLegend() {
  const byCommunity = byId("colour-by-community").checked;
  const counts = new Map();
  for (const key of view.keys()) {
    const c = state.membership.get(key);
    if (c) counts.set(c.id, { ...c, count: (counts.get(c.id)?.count || 0) + 1 });
  }
  const communities = [...counts.values()].sort((a, b) => b.count - a.count);
  renderLegend(byId("graph-legend"), { types: view.types(), hidden: view.hiddenTypes, byCommunity, communities, onToggle: toggleType });
}

function toggleType(type, shown) {
  const hidden = new Set(view.hiddenTypes);
  if (shown) hidden.delete(type);
  else hidden.add(type);
  view.setHiddenTypes(hidden);
}

async function recolour() {
  try {
    const byCommunity = byId("colour-by-community").checked;
    if (byCommunity) await fillCommunities(view.keys(), state.membership, state.communities);
    view.setColourBy(byCommunity ? "community" : "type", state.membership);
    redrawLegend();
    view.container.dataset.colourBy = view.colourBy;
  } catch (error) {
    showError(error);
  }
}

async function drawn(entities, relations, parent) {
  view.add(entities, relations, parent);
  await recolour();
}

async function select(key) {
  view.select(key);
  try {
    const hops = await get("/v1/graph/neighbourhood", { name: key, depth: 1, maxNodes: byId("max-nodes").value });
    await Promise.all([drawn(hops.nodes.map((n) => n.entity), hops.relations, key), entityDetails(key)]);
    view.container.dataset.expanded = key;
    showError(null);
  } catch (error) {
    showError(error);
  }
}

async function selectEdge(source, target) {
  try {
    const found = await get("/v1/graph/relation", { source, target, includeChunks: true });
    const r = found.relation;
    details(
      el("h3", {}, `${r.sourceName} — ${r.targetName}`),
      el("p", { class: "muted" }, `${r.keywords} · weight ${r.weight} · degree ${r.degree}`),
      el("p", { class: "description" }, r.description),
      el("h4", {}, `Source chunks (${found.chunks.length})`),
      ...chunkList(found.chunks),
    );
  } catch (error) {
    showError(error);
  }
}

export async function open(name) {
  try {
    const found = await get("/v1/graph/neighbourhood", { name, depth: byId("depth").value, maxNodes: byId("max-nodes").value });
    view.clear();
    const centre = found.nodes[0].entity.key;
    await drawn(found.nodes.map((n) => n.entity), found.relations, null);
    view.select(centre);
    await entityDetails(centre);
    view.container.dataset.centre = centre;
    showError(null);
  } catch (error) {
    showError(error);
  }
}

async function showCommunity(id) {
  try {
    const community = await getCommunity(id);
    details(...communityDetails(community, open));
    view.setFocus(new Set(community.entityKeys));
    view.container.dataset.focus = id;
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

async function findEntities() {
  const text = byId("entity-query").value.trim();
  const lower = text.toLowerCase();
  view.setFocus(text ? new Set(view.keys().filter((k) => view.graph.getNodeAttribute(k, "label").toLowerCase().includes(lower))) : null);
  if (!text) return [];
  const found = await get("/v1/graph/entities", { query: text, limit: 10 });
  const label = (e) => `${e.name} (${e.type})` + (e.aliases?.length ? ` · also ${e.aliases.join(", ")}` : "");
  byId("entity-hits-list").replaceChildren(...found.hits.map((h) => hitItem(h.entity, label(h.entity))));
  return found.hits;
}

// As the user types: the matches listed, and the drawn nodes whose name holds the text
// highlighted (the rest dimmed).
function typed() {
  clearTimeout(state.typing);
  state.typing = setTimeout(() => findEntities().catch(showError), SEARCH_DELAY_MS);
}

async function search(event) {
  event.preventDefault();
  clearTimeout(state.typing);
  try {
    const hits = await findEntities();
    if (hits.length) await open(hits[0].entity.key);
    else showError(new Error("no entity matches"));
  } catch (error) {
    showError(error);
  }
}

async function refreshCommunities() {
  const communities = await listCommunities();
  const listed = (c, rank) => [c.communityId, { title: titleOf(c), colour: communityColour(c.communityId, rank) }];
  state.communities = new Map(communities.map(listed));
  state.membership.clear(); // the workspace may have changed, or its communities
  renderCommunityList(byId("community-list"), communities, showCommunity);
  byId("colour-toggle").hidden = communities.length === 0;
}

export async function refreshTop() {
  try {
    const [stats] = await Promise.all([get("/v1/graph/stats", { top: 10 }), refreshCommunities()]);
    byId("top-entities").replaceChildren(...stats.topEntities.map((e) => hitItem(e, `${e.name} · ${e.degree}`)));
  } catch (error) {
    showError(error);
  }
}

// Empties the drawing, the lists, the legend and the details.
export function clearExplorer() {
  view.clear();
  state.membership.clear();
  for (const id of ["entity-hits-list", "top-entities", "community-list", "graph-legend"]) byId(id).replaceChildren();
  details(el("p", { class: "muted" }, "Nothing selected."));
}

export function initExplorer() {
  view = new GraphView(byId("graph-view"), { onNode: select, onEdge: selectEdge });
  window.ragstreamGraph = view; // for the browser tests and debugging from the browser's console
  byId("entity-form").addEventListener("submit", search);
  byId("entity-query").addEventListener("input", typed);
  byId("colour-by-community").addEventListener("change", recolour);
}
