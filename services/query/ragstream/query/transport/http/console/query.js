// Query tab: StreamQuery over server-sent events; the answer grows as deltas arrive, then
// the context (chunks with their reference ids, entities, relations), references, timings.
// Once the answer is complete its [n] markers link to the passages they cite, and the
// references list the passages the answer cites (the context lists them all).
import { el, showError, stream } from "./api.js";

const byId = (id) => document.getElementById(id);

function params() {
  const number = (id) => {
    const value = byId(id).value;
    return value === "" ? undefined : Number(value);
  };
  return {
    mode: byId("mode").value,
    topK: number("top-k"),
    chunkTopK: number("chunk-top-k"),
    maxTotalTokens: number("max-total-tokens"),
    onlyNeedContext: byId("only-context").checked,
  };
}

// Where a passage lies, as a reader checks it: title or path, page(s), section.
export function placeOf(p) {
  const parts = [p.title || p.filePath || p.docId];
  if (p.firstPage) parts.push(p.firstPage === p.lastPage ? `p. ${p.firstPage}` : `pp. ${p.firstPage}-${p.lastPage}`);
  if ((p.section || []).length) parts.push(p.section.join(" > "));
  return parts.join(", ");
}

const passageId = (chunkId) => `passage-${chunkId}`;
let passages = new Map(); // reference id -> the chunk id of its first passage in the context

function showReferences(references) {
  byId("references").replaceChildren(
    ...references.map((r) =>
      el(
        "li",
        { value: r.referenceId, "data-doc": r.docId, "data-ref": r.referenceId },
        el("a", { href: `#${passageId((r.chunkIds || [])[0])}`, class: "passage-link" }, placeOf(r)),
      ),
    ),
  );
}

function showContext(retrieval) {
  const context = retrieval.context || {};
  const chunks = context.chunks || [];
  passages = new Map();
  for (const c of chunks) if (!passages.has(c.referenceId)) passages.set(c.referenceId, c.chunkId);
  byId("chunk-count").textContent = `(${chunks.length})`;
  byId("context-chunks").replaceChildren(
    ...chunks.map((c) =>
      el(
        "div",
        { class: "chunk", id: passageId(c.chunkId), "data-ref": c.referenceId },
        el("div", { class: "chunk-head" }, `[${c.referenceId}] ${placeOf(c)}`),
        el("div", { class: "chunk-text" }, c.content),
      ),
    ),
  );
  const entities = context.entities || [];
  byId("entity-hits").textContent = `(${entities.length})`;
  byId("context-entities").replaceChildren(
    ...entities.map((e) => el("li", {}, el("b", {}, e.name), ` (${e.type}) ${e.description}`)),
  );
  const relations = context.relations || [];
  byId("relation-hits").textContent = `(${relations.length})`;
  byId("context-relations").replaceChildren(
    ...relations.map((r) => el("li", {}, el("b", {}, `${r.source} — ${r.target}`), ` ${r.description}`)),
  );
  showReferences(retrieval.references || []);
  byId("notes").textContent = (retrieval.notes || []).join("; ");
}

// The answer's [n] and [n, m] markers become links to the passages they cite; a number that
// names no passage of the context stays text.
function linkMarkers(answer) {
  const text = answer.textContent;
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
    nodes.push(text.slice(last, match.index), "[");
    match[1].split(",").forEach((number, index) => {
      const ref = number.trim();
      if (index) nodes.push(", ");
      const chunk = passages.get(ref);
      nodes.push(chunk ? el("a", { href: `#${passageId(chunk)}`, class: "cite", "data-ref": ref }, ref) : ref);
    });
    nodes.push("]");
    last = match.index + match[0].length;
  }
  nodes.push(text.slice(last));
  answer.replaceChildren(...nodes.map((n) => (n instanceof Node ? n : document.createTextNode(n))));
}

// Opening a passage: its context section unfolds, it scrolls into view and is marked.
function openPassage(event) {
  const link = event.target.closest("a.cite, a.passage-link");
  if (!link) return;
  event.preventDefault();
  const passage = document.getElementById(link.getAttribute("href").slice(1));
  if (!passage) return;
  passage.closest("details").open = true;
  for (const open of document.querySelectorAll(".chunk.open")) open.classList.remove("open");
  passage.classList.add("open");
  passage.scrollIntoView({ block: "center" });
}

function showTimings(timings) {
  byId("timings").tBodies[0].replaceChildren(
    ...timings.map((t) =>
      el("tr", {}, el("td", {}, t.stage), el("td", { class: "num" }, `${t.durationMs.toFixed(1)} ms`)),
    ),
  );
}

async function ask(event) {
  event.preventDefault();
  const answer = byId("answer");
  answer.textContent = "";
  delete answer.dataset.done;
  answer.classList.add("busy");
  byId("ask").disabled = true;
  showError(null);
  try {
    await stream("/v1/query/stream", { query: byId("question").value, params: params() }, (name, data) => {
      if (name === "context") showContext(data.context);
      else if (name === "delta") answer.textContent += data.delta;
      else if (name === "end") {
        showTimings(data.end.timings);
        if (!byId("only-context").checked) showReferences(data.end.references || []);
      }
      else if (name === "error") throw new Error(data.message);
    });
    linkMarkers(answer);
    answer.dataset.done = "true";
  } catch (error) {
    showError(error);
  } finally {
    answer.classList.remove("busy");
    byId("ask").disabled = false;
  }
}

// Empties the answer, its context, references, notes and timings.
export function clearQuery() {
  const answer = byId("answer");
  answer.textContent = "";
  delete answer.dataset.done;
  for (const id of ["chunk-count", "entity-hits", "relation-hits", "notes"]) byId(id).textContent = "";
  for (const id of ["context-chunks", "context-entities", "context-relations", "references"]) {
    byId(id).replaceChildren();
  }
  byId("timings").tBodies[0].replaceChildren();
}

export function initQuery() {
  byId("query-form").addEventListener("submit", ask);
  byId("answer").addEventListener("click", openPassage);
  byId("references").addEventListener("click", openPassage);
}
