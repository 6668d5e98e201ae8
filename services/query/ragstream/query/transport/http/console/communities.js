// Communities in the console: the workspace's top-level communities (ListCommunities, best
// rated first) listed with title, size and rating; a community's report (GetCommunity); and
// which community each drawn entity belongs to (GetEntityCommunities), for colouring.
import { el, get } from "./api.js";
import { communityColour } from "./palette.js";

export const titleOf = (community) => community.report?.title || `community ${community.communityId.slice(0, 8)}`;

export async function listCommunities() {
  const found = await get("/v1/graph/communities", { level: 0, limit: 100 });
  return found.communities;
}

// The list panel; onPick(communityId) when one is clicked.
export function renderCommunityList(list, communities, onPick) {
  if (!communities.length) {
    list.replaceChildren(el("li", { class: "muted" }, "No communities yet."));
    return;
  }
  list.replaceChildren(
    ...communities.map((c) => {
      const button = el("button", { class: "link", "data-community": c.communityId }, titleOf(c));
      button.addEventListener("click", () => onPick(c.communityId));
      const rating = c.report ? ` · rated ${c.report.rating}` : "";
      return el("li", {}, button, el("span", { class: "muted" }, ` ${c.size} entities${rating}`));
    }),
  );
}

export async function getCommunity(id) {
  return (await get("/v1/graph/community", { communityId: id })).community;
}

// The report, then the members as buttons; onMember(key) when one is clicked.
export function communityDetails(community, onMember) {
  const report = community.report;
  const findings = (report?.findings || []).map((f) => el("li", {}, el("strong", {}, f.summary), " ", f.explanation || ""));
  const members = community.entityKeys.map((key) => {
    const button = el("button", { class: "link", "data-key": key }, key);
    button.addEventListener("click", () => onMember(key));
    return el("li", {}, button);
  });
  return [
    el("h3", {}, titleOf(community)),
    el("p", { class: "muted" }, `level ${community.level} · ${community.size} entities${report ? ` · rated ${report.rating}` : ""}`),
    el("p", { class: "description community-summary" }, report?.summary || "No report written yet."),
    ...(findings.length ? [el("h4", {}, "Findings"), el("ul", {}, ...findings)] : []),
    el("h4", {}, `Members (${members.length})`),
    el("ul", { class: "members" }, ...members),
  ];
}

// Fills `known` (entity key -> {id, title, colour}) with the top-level community of each
// key not in it yet; an entity without relations has none and is left out. `listed`:
// community id -> {title, colour} of the communities listed.
export async function fillCommunities(keys, known, listed) {
  const missing = keys.filter((k) => !known.has(k));
  const lookup = (name) => get("/v1/graph/entity/communities", { name }).catch((error) => {
    if (error.status === 404) return null; // deleted since it was drawn
    throw error;
  });
  const found = await Promise.all(missing.map(lookup));
  found.forEach((reply, i) => {
    const top = reply?.communities?.[0];
    if (!top) return;
    const id = top.communityId;
    known.set(missing[i], { id, ...(listed.get(id) ?? { title: titleOf(top), colour: communityColour(id) }) });
  });
}
