// Node colours: one per entity type (the extractor's usual types have fixed ones, others
// are hashed into the palette) or one per community: the listed communities take the
// palette's colours in the list's order (best rated first), so the top ones never share
// a colour; any other is hashed from its id.
const PALETTE = [
  "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f", "#17becf", "#bcbd22", "#8c564b", "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
];
const TYPES = {
  person: "#e15759",
  organization: "#4e79a7",
  location: "#59a14f",
  geo: "#59a14f",
  event: "#f28e2b",
  product: "#b07aa1",
  technology: "#76b7b2",
  concept: "#edc948",
  category: "#9c755f",
  untyped: "#bab0ac",
};
export const DIMMED = "#e3e6ec";

function hashed(text) {
  let hash = 0;
  for (const ch of text) hash = (Math.imul(hash, 31) + ch.codePointAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

export const typeColour = (type) => TYPES[type] ?? hashed(type);
export const communityColour = (id, rank = -1) => (rank >= 0 ? PALETTE[rank % PALETTE.length] : hashed(id));
