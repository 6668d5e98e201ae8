// The drawing's legend: one line per entity type drawn, with its colour, how many nodes
// have it and a box that shows or hides them (the type filter); when nodes are coloured by
// community, one line per community drawn as well.
import { el } from "./api.js";
import { typeColour } from "./palette.js";

function swatch(colour) {
  const mark = el("span", { class: "swatch" });
  mark.style.backgroundColor = colour; // CSSOM, which the page's CSP allows (style attributes it does not)
  return mark;
}

function typeLine(type, count, shown, byCommunity, onToggle) {
  const box = el("input", { type: "checkbox", "data-type": type });
  box.checked = shown;
  box.addEventListener("change", () => onToggle(type, box.checked));
  const colour = byCommunity ? [] : [swatch(typeColour(type))];
  return el("li", {}, el("label", {}, box, ...colour, ` ${type} (${count})`));
}

// types: {type: count}; hidden: Set of types; communities: [{id, title, colour, count}].
export function renderLegend(box, { types, hidden, byCommunity, communities, onToggle }) {
  const byCount = Object.entries(types).sort(([a, m], [b, n]) => n - m || a.localeCompare(b));
  const parts = [
    el("div", {}, el("h4", {}, "Types"), el("ul", { class: "legend-types" }, ...byCount.map(([t, n]) => typeLine(t, n, !hidden.has(t), byCommunity, onToggle)))),
  ];
  if (byCommunity) {
    const lines = communities.map((c) => el("li", { "data-community": c.id }, swatch(c.colour), ` ${c.title} (${c.count})`));
    parts.push(el("div", {}, el("h4", {}, "Communities"), el("ul", { class: "legend-communities" }, ...lines)));
  }
  box.replaceChildren(...parts);
}
